"""`record` (spec v2 §8, §10 points 60-84): scripted agents, every ending, every fixture form,
replay, enforcement, approvals, caps; each run's trace asserted event by event, and its exit."""
from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from agent_invariants.errors import InputError
from agent_invariants.record import RecordOptions, record
from agent_invariants.record.writer import MAX_TRACE_LINE, Clock, LineTooLong, TraceWriter
from agent_invariants.render import RenderOptions, renderer, sarif
from agent_invariants.render.shared import verdict

from record_helpers import AGENT, DONE, MARK, START, call, leftover_agents, run_agent, send
from support import sarif_validator

V2 = {"version": 2, "name": "refunds", "rules": [
    {"id": "refund-approved", "kind": "approval_bound", "tool": "refund", "bind": "args_subset"},
    {"id": "no-shell", "kind": "deny_tool", "tool": "shell.*"}]}
FIXTURES = {"version": 1, "input": {"ticket": "T-7"},
            "tools": {"orders.get": {"id": "A9", "paid": 10}, "refund": {"$literal": {"$file": "not a file"}}}}


def _inputs(tmp_path: Path) -> tuple[Path, Path]:
    """The contract V2 and the fixtures FIXTURES, written as c.json and fixtures.json."""
    contract, fixtures = tmp_path / "c.json", tmp_path / "fixtures.json"
    contract.write_text(json.dumps(V2), encoding="utf-8")
    fixtures.write_text(json.dumps(FIXTURES), encoding="utf-8")
    return contract, fixtures


@pytest.fixture(autouse=True)
def _no_agent_left() -> object:
    yield
    deadline = time.monotonic() + 1
    while leftover_agents() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert leftover_agents() == []


def test_a_completed_run_writes_every_exchange_in_order(tmp_path: Path) -> None:
    steps = [*START, *call("c1", "orders.get", {"order": "A9"}), send("agent.message", text="looked it up",
             confidence=0.5), *call("c2", "refund", {"order": "A9", "amount": 10}),
             send("run.completed", status="completed", output={"refunded": True})]
    run = run_agent(tmp_path, steps, V2, FIXTURES)
    assert run.numbered()
    assert run.bare() == [
        {"type": "run.start", "data": {"input": {"ticket": "T-7"}, "protocol": 1}},
        {"type": "tool.call", "tool": "orders.get", "call_id": "c1", "args": {"order": "A9"}},
        {"type": "tool.result", "tool": "orders.get", "call_id": "c1", "ok": True, "result": {"id": "A9", "paid": 10},
         "data": {"fixture": {"key": "orders.get"}}},
        {"type": "agent.message", "confidence": 0.5, "data": {"text": "looked it up"}},
        {"type": "tool.call", "tool": "refund", "call_id": "c2", "args": {"order": "A9", "amount": 10}},
        {"type": "tool.result", "tool": "refund", "call_id": "c2", "ok": True, "result": {"$file": "not a file"},
         "data": {"fixture": {"key": "refund"}}},
        {"type": "run.completed", "status": "completed", "output": {"refunded": True}},
    ]
    assert run.replies == [
        {"type": "run.start", "protocol": 1, "run_id": "fake-run", "input": {"ticket": "T-7"}},
        {"type": "tool.result", "call_id": "c1", "ok": True, "result": {"id": "A9", "paid": 10}},
        {"type": "tool.result", "call_id": "c2", "ok": True, "result": {"$file": "not a file"}},
    ]
    assert run.violations() == [("refund-approved", 5, "approval_bound.missing")]
    assert run.info.ended_by == "completed" and run.info.exit_status == 0 and run.info.findings == []
    assert run.report.partial is not True
    assert run.code == 1


def test_the_same_agent_gives_a_byte_identical_trace_under_the_fake_clock(tmp_path: Path) -> None:
    steps = [*START, *call("c1", "orders.get", {"order": "A9"}), *DONE]
    first = run_agent(tmp_path, steps, V2, FIXTURES, name="one")
    second = run_agent(tmp_path, steps, V2, FIXTURES, name="two")
    assert first.trace.read_bytes() == second.trace.read_bytes()
    assert first.code == second.code == 0


def test_a_real_clock_gives_increasing_times_a_random_run_id_and_a_measured_duration(tmp_path: Path) -> None:
    run = run_agent(tmp_path, [*START, *call("c1", "orders.get"), *DONE], V2, FIXTURES, fake_clock=False)
    times = [event["time"] for event in run.events]
    assert times == sorted(times) and all(time.endswith("Z") and len(time) == 24 for time in times)
    run_ids = {event["run_id"] for event in run.events}
    assert len(run_ids) == 1 and len(run_ids.pop()) == 32
    assert isinstance(run.events[-1]["duration_ms"], int)


# --- fixtures ---------------------------------------------------------------------------------

CASES = {"version": 1, "tools": {
    "search": {"$cases": [
        {"call_index": 0, "result": "first"},
        {"args": {"q": {"$regex": "^refund"}}, "result": "about refunds", "duration_ms": 12.5},
        {"call_index": 2, "args": {"q": "x"}, "ok": False, "result": {"error": "rate limited"}},
        {"result": "fallback"}]},
    "kb.*": {"$file": "answer.json"},
    "verify": {"$cases": [{"observe": {"outcome_id": "refund-done", "verdict": "satisfied"}, "result": True}]},
    "no_cases": {"$cases": [{"call_index": 5, "result": 1}]}}}


def test_cases_are_chosen_by_call_index_and_args_with_a_fallback_and_files_and_observe(tmp_path: Path) -> None:
    (tmp_path / "answer.json").write_text('{"from": "file"}', encoding="utf-8")
    steps = [*START, *call("s0", "search", {"q": "refund policy"}), *call("s1", "search", {"q": "refund policy"}),
             *call("s2", "search", {"q": "x"}), *call("s3", "search"), *call("k1", "kb.lookup", {"id": 1}),
             *call("v1", "verify"), *call("n1", "no_cases"), *call("u1", "unknown.tool"), *DONE]
    contract = {"version": 2, "name": "any", "rules": [{"id": "no-shell", "kind": "deny_tool", "tool": "shell"}]}
    run = run_agent(tmp_path, steps, contract, CASES)
    results = [event for event in run.bare() if event["type"] in ("tool.result", "outcome.observed")]
    assert results == [
        {"type": "tool.result", "tool": "search", "call_id": "s0", "ok": True, "result": "first",
         "data": {"fixture": {"key": "search", "case": 0}}},
        {"type": "tool.result", "tool": "search", "call_id": "s1", "ok": True, "result": "about refunds",
         "duration_ms": 12.5, "data": {"fixture": {"key": "search", "case": 1}}},
        {"type": "tool.result", "tool": "search", "call_id": "s2", "ok": False, "result": {"error": "rate limited"},
         "data": {"fixture": {"key": "search", "case": 2}}},
        {"type": "tool.result", "tool": "search", "call_id": "s3", "ok": True, "result": "fallback",
         "data": {"fixture": {"key": "search", "case": 3}}},
        {"type": "tool.result", "tool": "kb.lookup", "call_id": "k1", "ok": True, "result": {"from": "file"},
         "data": {"fixture": {"key": "kb.*"}}},
        {"type": "tool.result", "tool": "verify", "call_id": "v1", "ok": True, "result": True,
         "data": {"fixture": {"key": "verify", "case": 0}}},
        {"type": "outcome.observed", "call_id": "v1", "outcome_id": "refund-done", "verdict": "satisfied",
         "evidence_class": "configured_verifier", "data": {"attested_by": "harness"}},
        {"type": "tool.result", "tool": "no_cases", "call_id": "n1", "ok": False, "result": {"error": "no fixture"},
         "data": {"fixture_miss": True}},
        {"type": "tool.result", "tool": "unknown.tool", "call_id": "u1", "ok": False,
         "result": {"error": "no fixture"}, "data": {"fixture_miss": True}},
    ]
    misses = [(f.code, f.seq, f.call_id, f.tool, f.call_index) for f in run.info.findings]
    assert misses == [("record.fixture_miss", 15, "n1", "no_cases", 0),
                      ("record.fixture_miss", 17, "u1", "unknown.tool", 0)]
    assert run.report.passed and run.code == 2   # a pass with a miss did not test its scenario


def test_a_denied_call_still_counts_for_call_index(tmp_path: Path) -> None:
    fixtures = {"version": 1, "tools": {"pay": {"$cases": [{"call_index": 1, "result": "second"},
                                                            {"result": "other"}]}}}
    contract = {"version": 2, "name": "c", "rules": [
        {"id": "no-big", "kind": "tool_args", "tool": "pay", "match": {"amount": {"$lte": 10}}}]}
    steps = [*START, *call("p0", "pay", {"amount": 50}), *call("p1", "pay", {"amount": 5}), *DONE]
    run = run_agent(tmp_path, steps, contract, fixtures, enforce=True)
    assert [event["type"] for event in run.events] == [
        "run.start", "tool.call", "tool.denied", "tool.call", "tool.result", "run.completed"]
    assert run.events[4]["result"] == "second"


@pytest.mark.parametrize(("fixtures", "problem"), [
    ({"tools": {}}, "$: needs 'version'"),
    ({"version": 2, "tools": {}}, "$.version: must be 1"),
    ({"version": 1, "tools": {}, "extra": 1}, "$.extra: unknown key"),
    ({"version": 1, "tools": {"x": {"$cases": [{"result": 1}, {"call_index": 0}]}}},
     "$.tools.x.$cases[0]: a case without call_index or args is the fallback and must come last"),
    ({"version": 1, "tools": {"x": {"$cases": [{"call_index": 0}, {"call_index": 0}]}}},
     "$.tools.x.$cases[1]: has the same selectors as case 0"),
    ({"version": 1, "tools": {"x": {"$cases": [{"ok": "yes"}]}}}, "$.tools.x.$cases[0].ok: must be true or false"),
    ({"version": 1, "tools": {"crm.lookup": {"$cases": [{"ok": "yes"}]}}},
     '$.tools["crm.lookup"].$cases[0].ok: must be true or false'),   # a dotted name in brackets: one reading
    ({"version": 1, "tools": {"x": {"$cases": [{"duration_ms": -1}]}}}, "$.tools.x.$cases[0].duration_ms"),
    ({"version": 1, "tools": {"x": {"$cases": [{"args": {"a": {"$from_output": "x"}}}]}}},
     "$.tools.x.$cases[0].args.a"),
    ({"version": 1, "tools": {"x": {"$file": "missing.json"}}}, "$.tools.x.$file: missing.json: no such file"),
    ({"version": 1, "tools": {"x": {"$cases": [{"observe": {"outcome_id": "o"}}]}}},
     "$.tools.x.$cases[0].observe: needs 'verdict'"),
    ({"version": 1, "tools": {}, "approvals": [{"tool": "t", "decision": "maybe"}]},
     "$.approvals[0].decision: must be \"approve\" or \"deny\""),
    ({"version": 1, "tools": {"big": "x" * 1_040_400}}, "$.tools.big: the result is 1,040,402 bytes"),
    ({"version": 1, "tools": {}, "input": "x" * 1_040_400}, "$.input: the input is 1,040,402 bytes"),
    ({"version": 1, "tools": {"x": {"$cases": [{"duration_ms": 10**400}]}}},
     "$.tools.x.$cases[0].duration_ms: must be a number of milliseconds"),
    ({"version": 1, "tools": {"x": {"$file": "."}}}, "$.tools.x.$file: .: not a regular file"),
    # a key longer than a tool may be: the trace names it beside a result near the cap (hunt 70)
    ({"version": 1, "tools": {"*" * 501: 1}}, "a tool name or glob is at most 500 characters, as a rule's tool is"),
    ({"version": 1, "tools": {}, "redact": ["token", " "]},
     '$.redact[1]: must be a key name (a string, not blank), got " "'),
    ({"version": 1, "tools": {}, "redact": [3]}, "$.redact[0]: must be a key name (a string, not blank), got a number"),
    ({"version": 1, "tools": {"x": {"$file": "a\u0000b.json"}}},
     "$.tools.x.$file: a\\x00b.json: no such file (the name holds a NUL character)"),   # (escaped)
])
def test_bad_fixtures_are_refused_before_the_agent_starts(tmp_path: Path, fixtures: dict, problem: str) -> None:
    path = tmp_path / "f.json"
    path.write_text(json.dumps(fixtures), encoding="utf-8")
    contract, _ = _inputs(tmp_path)
    out = tmp_path / "t.jsonl"
    with pytest.raises(InputError) as caught:
        record(contract, [sys.executable, "-c", "raise SystemExit(9)"], RecordOptions(fixtures=str(path), out=str(out)))
    assert str(caught.value).startswith(f"{path}: ") and problem in str(caught.value)
    assert not out.exists()


def test_a_fifo_as_a_file_fixture_is_refused(tmp_path: Path) -> None:
    import os

    os.mkfifo(tmp_path / "answer.json")
    from agent_invariants.record.fixtures import load_fixtures

    path = tmp_path / "f.json"
    path.write_text(json.dumps({"version": 1, "tools": {"x": {"$file": "answer.json"}}}), encoding="utf-8")
    with pytest.raises(InputError, match=r"\$\.tools\.x\.\$file: answer\.json: not a regular file"):
        load_fixtures(path)


def test_a_file_fixture_too_large_for_a_trace_line_says_so(tmp_path: Path) -> None:
    """Valid JSON (twenty megabytes of spaces before a 1) that no trace line could carry: its
    size is the problem, not a JSON error from a cut read."""
    from agent_invariants.record.fixtures import load_fixtures

    (tmp_path / "answer.json").write_bytes(b" " * (20 << 20) + b"1")
    path = tmp_path / "f.json"
    path.write_text(json.dumps({"version": 1, "tools": {"x": {"$file": "answer.json"}}}), encoding="utf-8")
    with pytest.raises(InputError, match=r"\$\.tools\.x\.\$file: answer\.json: larger than 4,161,536 bytes, more "
                                         r"than a trace line can carry$"):
        load_fixtures(path)


def test_a_fixtures_file_with_a_byte_order_mark_is_refused_in_words_that_fit_fixtures(tmp_path: Path) -> None:
    from agent_invariants.record.fixtures import load_fixtures

    path = tmp_path / "f.json"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps({"version": 1, "tools": {}}).encode())
    with pytest.raises(InputError, match="f.json: starts with a UTF-8 byte order mark") as refused:
        load_fixtures(path)
    assert "contracts may not" not in str(refused.value).partition("(")[0]


def test_a_case_hidden_behind_an_earlier_one_with_its_call_index_is_warned_about(tmp_path: Path) -> None:
    path = tmp_path / "f.json"
    path.write_text(json.dumps({"version": 1, "tools": {"x": {"$cases": [
        {"call_index": 0, "result": 1}, {"call_index": 0, "args": {"a": 1}, "result": 2}]}}}), encoding="utf-8")
    from agent_invariants.record.fixtures import load_fixtures

    heard: list[str] = []
    load_fixtures(path, heard.append)
    assert heard == [f"warning: {path}: $.tools.x.$cases[1]: never chosen: case 0 answers every call with "
                     "call_index 0 first"]


# --- approvals --------------------------------------------------------------------------------

APPROVALS = {"version": 1, "tools": {"refund": {"ok": True}},
             "approvals": [{"tool": "refund", "args": {"amount": {"$lte": 10}}, "decision": "approve",
                            "approver": "ops@example.com"},
                           {"tool": "refund", "decision": "deny"}]}


def test_approval_requests_are_decided_by_the_first_matching_entry_and_misses_are_denied(tmp_path: Path) -> None:
    steps = [*START,
             send("approval.request", approval_id="a1", tool="refund", args={"order": "A9", "amount": 10}), {"recv": 1},
             *call("c1", "refund", {"order": "A9", "amount": 10}),
             send("approval.request", approval_id="a2", tool="refund", args={"amount": 99}), {"recv": 1},
             send("approval.request", approval_id="a3", tool="wire"), {"recv": 1}, *DONE]
    run = run_agent(tmp_path, steps, V2, APPROVALS)
    assert run.bare()[1:3] == [
        {"type": "approval.requested", "tool": "refund", "approval_id": "a1", "args": {"order": "A9", "amount": 10}},
        {"type": "approval.granted", "tool": "refund", "approval_id": "a1", "approved": True,
         "args": {"order": "A9", "amount": 10}, "approver": "ops@example.com", "data": {"attested_by": "harness"}}]
    assert run.bare()[6] == {"type": "approval.granted", "tool": "refund", "approval_id": "a2", "approved": False,
                             "args": {"amount": 99}, "data": {"attested_by": "harness"}}
    assert run.bare()[8] == {"type": "approval.granted", "tool": "wire", "approval_id": "a3", "approved": False,
                             "data": {"attested_by": "harness", "fixture_miss": True}}
    decisions = [reply for reply in run.replies if reply["type"] == "approval.decision"]
    assert decisions == [{"type": "approval.decision", "approval_id": "a1", "approved": True},
                         {"type": "approval.decision", "approval_id": "a2", "approved": False},
                         {"type": "approval.decision", "approval_id": "a3", "approved": False}]
    assert run.violations() == []
    assert [(f.code, f.seq, f.tool) for f in run.info.findings] == [("record.approval_miss", 8, "wire")]
    assert run.code == 2


def test_attested_by_refuses_a_grant_the_agent_gave_itself(tmp_path: Path) -> None:
    contract = {"version": 2, "name": "c", "rules": [
        {"id": "refund-approved", "kind": "approval_bound", "tool": "refund", "attested_by": ["harness"]}]}
    steps = [*START, send("approval.granted", approval_id="self", tool="refund"),
             *call("c1", "refund", {"amount": 5}), *DONE]
    run = run_agent(tmp_path, steps, contract, APPROVALS, enforce=True)
    assert run.bare()[1] == {"type": "approval.granted", "tool": "refund", "approval_id": "self",
                             "data": {"attested_by": "agent"}}
    assert run.bare()[3]["type"] == "tool.denied"
    violation = run.report.violations[0]
    assert violation.evidence["rejected"] == [{"grant_seq": 2, "why": "attestation"}]
    assert violation.prevented is True and "prevented" not in violation.evidence
    # without attested_by, the agent's own grant covers the call
    lax = {"version": 2, "name": "c", "rules": [{"id": "refund-approved", "kind": "approval_bound", "tool": "refund"}]}
    assert run_agent(tmp_path, steps, lax, APPROVALS, name="lax", enforce=True).code == 0


def test_an_agent_outcome_is_recorded_as_self_attestation_whatever_it_claims(tmp_path: Path) -> None:
    steps = [*START, send("outcome.observed", outcome_id="o1", verdict="satisfied",
                          evidence_class="externally_observed", data={"note": 1, "attested_by": "harness"}), *DONE]
    run = run_agent(tmp_path, steps, V2, FIXTURES)
    assert run.bare()[1] == {"type": "outcome.observed", "outcome_id": "o1", "verdict": "satisfied",
                             "evidence_class": "self_attestation",
                             "data": {"note": 1, "attested_by": "agent",
                                      "claimed_evidence_class": "externally_observed"}}


# --- replay -----------------------------------------------------------------------------------

def test_replay_answers_by_tool_canonical_args_and_occurrence_then_fixtures(tmp_path: Path) -> None:
    baseline = tmp_path / "baseline.jsonl"
    baseline.write_text("\n".join(json.dumps(event) for event in [
        {"seq": 1, "type": "tool.call", "tool": "search", "call_id": "a", "args": {"q": "x", "n": 1}},
        {"seq": 2, "type": "tool.result", "call_id": "a", "ok": True, "result": "first x", "duration_ms": 7},
        {"seq": 3, "type": "outcome.observed", "outcome_id": "o", "verdict": "satisfied",
         "evidence_class": "configured_verifier", "data": {"attested_by": "harness"}},
        {"seq": 4, "type": "tool.call", "tool": "search", "call_id": "b", "args": {"n": 1, "q": "x"}},
        {"seq": 5, "type": "tool.result", "call_id": "b", "ok": False, "result": "second x"},
        {"seq": 6, "type": "tool.call", "tool": "search", "call_id": "c"},
        {"seq": 7, "type": "tool.result", "call_id": "c", "ok": True, "result": "no args"},
    ]) + "\n", encoding="utf-8")
    fixtures = {"version": 1, "tools": {"search": "from fixtures"}}
    steps = [*START, *call("1", "search", {"q": "x", "n": 1}), *call("2", "search", {"q": "x", "n": 1}),
             *call("3", "search", {"q": "x", "n": 1}), *call("4", "search", {}), *call("5", "search"), *DONE]
    run = run_agent(tmp_path, steps, V2, fixtures, replay=str(baseline))
    answers = [(e.get("call_id"), e.get("result"), e.get("data")) for e in run.bare()
               if e["type"] in ("tool.result", "outcome.observed")]
    assert answers == [("1", "first x", {"replay_seq": 2}), ("1", None, {"attested_by": "harness"}),
                       ("2", "second x", {"replay_seq": 5}), ("3", "from fixtures", {"fixture": {"key": "search"}}),
                       ("4", "from fixtures", {"fixture": {"key": "search"}}), ("5", "no args", {"replay_seq": 7})]
    assert run.bare()[2]["duration_ms"] == 7 and run.bare()[5]["ok"] is False


def test_a_baseline_miss_is_not_replayed_as_an_answer(tmp_path: Path) -> None:
    """A baseline call nothing answered (a fixture miss) and a request no entry decided (an
    approval miss) are not replayed as an ordinary failure and denial: this run's fixtures answer
    them, else they are misses again (findings, exit 2), since the path was never exercised."""
    steps = [*START, *call("c1", "lookup", {"id": 7}),
             send("approval.request", approval_id="a1", tool="refund", args={"amount": 10}), {"recv": 1}, *DONE]
    first = run_agent(tmp_path, steps, V2, {"version": 1, "tools": {}}, name="baseline")
    assert [finding.code for finding in first.info.findings] == ["record.fixture_miss", "record.approval_miss"]
    answering = {"version": 1, "tools": {"lookup": {"found": True}},
                 "approvals": [{"tool": "refund", "decision": "approve"}]}
    again = run_agent(tmp_path, steps, V2, answering, name="answered", replay=str(first.trace))
    assert [(e["type"], e.get("result", e.get("approved")), e.get("data")) for e in again.bare()
            if e["type"] in ("tool.result", "approval.granted")] == [
        ("tool.result", {"found": True}, {"fixture": {"key": "lookup"}}),
        ("approval.granted", True, {"attested_by": "harness"})]
    assert (again.code, again.info.findings) == (0, [])
    alone = run_agent(tmp_path, steps, V2, None, name="alone", replay=str(first.trace))
    assert [finding.code for finding in alone.info.findings] == ["record.fixture_miss", "record.approval_miss"]
    assert alone.code == 2


def test_an_invalid_baseline_is_refused_before_the_agent_starts(tmp_path: Path) -> None:
    baseline = tmp_path / "b.jsonl"
    baseline.write_text('{"seq": 1, "type": "tool.call"}\nnot json\n', encoding="utf-8")
    contract, _ = _inputs(tmp_path)
    with pytest.raises(InputError, match=r"b\.jsonl:2"):
        record(contract, [sys.executable, "-c", "pass"], RecordOptions(replay=str(baseline),
                                                                       out=str(tmp_path / "t.jsonl")))
    assert not (tmp_path / "t.jsonl").exists()


@pytest.mark.parametrize("strict", [False, True])
def test_an_empty_baseline_is_said_and_refused_under_strict(tmp_path: Path, strict: bool) -> None:
    """A baseline of no events (a wrong path to a new file, a file cut short) answers no call: it
    is a warning, and under --strict an error before the agent starts, as an empty trace is for
    check."""
    baseline = tmp_path / "b.jsonl"
    baseline.write_text("", encoding="utf-8")
    contract, _ = _inputs(tmp_path)
    said: list[str] = []
    options = RecordOptions(replay=str(baseline), out=str(tmp_path / "t.jsonl"), strict=strict, fake_clock=True)
    agent = [sys.executable, "-c", DONE_AGENT]
    expected = f"--replay {baseline}: the baseline has no events, so it answers no call"
    if strict:
        with pytest.raises(InputError) as refused:
            record(contract, agent, options, said.append)
        assert str(refused.value) == expected and said == []
        assert not (tmp_path / "t.jsonl").exists()
    else:
        record(contract, agent, options, said.append)
        assert said[0] == f"warning: {expected}"


# --- enforcement ------------------------------------------------------------------------------

ENFORCED = [
    ({"id": "r", "kind": "deny_tool", "tool": "shell.*"}, [("c1", "shell.run", None)], [True]),
    ({"id": "r", "kind": "allow_tools", "tools": ["search"]}, [("c1", "search", None), ("c2", "rm", None)],
     [False, True]),
    ({"id": "r", "kind": "require_approval", "tool": "refund"}, [("c1", "refund", None)], [True]),
    ({"id": "r", "kind": "approval_bound", "tool": "refund"}, [("c1", "refund", None)], [True]),
    ({"id": "r", "kind": "tool_calls", "tool": "search", "max": 1},
     [("c1", "search", None), ("c2", "search", None), ("c3", "search", None)], [False, True, True]),
    ({"id": "r", "kind": "retry_limit", "max_attempts": 1, "group_by": "tool"},
     [("c1", "a", None), ("c2", "b", None), ("c3", "a", None), ("c4", "a", None)], [False, False, True, True]),
    ({"id": "r", "kind": "tool_args", "tool": "pay", "match": {"amount": {"$lte": 10}}},
     [("c1", "pay", {"amount": 5}), ("c2", "pay", {"amount": 50})], [False, True]),
    ({"id": "r", "kind": "deny_event", "match": {"type": "tool.call", "tool": "drop"}}, [("c1", "drop", None)],
     [True]),
    ({"id": "r", "kind": "require_order", "before": {"type": "tool.call", "tool": "get"},
      "after": {"type": "tool.call", "tool": "refund"}}, [("c1", "refund", None), ("c2", "get", None),
                                                          ("c3", "refund", None)], [True, False, False]),
    ({"id": "r", "kind": "precedence", "before": {"tool": "get"}, "after": {"tool": "refund"}},
     [("c1", "refund", None), ("c2", "get", None), ("c3", "refund", None)], [True, False, False]),
    ({"id": "r", "kind": "tool_calls", "tool": "search", "max": 0, "severity": "warning"},
     [("c1", "search", None)], [False]),
    ({"id": "r", "kind": "tool_args", "tool": "pay", "match": {"amount": {"$from_output": "total"}}},
     [("c1", "pay", {"amount": 5})], [False]),
    ({"id": "r", "kind": "tool_order", "tools": ["a", "b"], "mode": "exact"},
     [("c1", "b", None)], [False]),
]


@pytest.mark.parametrize(("rule", "calls", "denied"), ENFORCED, ids=lambda value: str(value)[:40])
def test_enforce_denies_exactly_the_calls_a_safety_rule_fails_at(tmp_path: Path, rule: dict, calls: list,
                                                                 denied: list[bool]) -> None:
    version = 2 if rule["kind"] in ("approval_bound", "tool_calls", "tool_args", "precedence", "tool_order") else 1
    contract = {"version": version, "name": "c", "rules": [rule]}
    steps = [*START]
    for call_id, tool, args in calls:
        steps += call(call_id, tool, args)
    steps += DONE
    fixtures = {"version": 1, "tools": {"*": "ok"}}
    run = run_agent(tmp_path, steps, contract, fixtures, enforce=True, lint=False)
    answers = [event["type"] == "tool.denied" for event in run.events
               if event["type"] in ("tool.result", "tool.denied")]
    assert answers == denied
    for event in run.events:
        if event["type"] == "tool.denied":
            assert event["data"] == {"rule_ids": ["r"]} and event["reason"].startswith("r: ")
    replies = [reply["type"] == "tool.denied" for reply in run.replies[1:]]
    assert replies == denied
    assert run.info.denied == sum(denied)
    assert run.code == (0 if rule.get("severity") == "warning" else 1)   # each of these traces breaks its rule


def test_the_reason_names_the_first_firing_rule_and_every_firing_rule_is_listed(tmp_path: Path) -> None:
    contract = {"version": 1, "name": "c", "rules": [
        {"id": "warn-only", "kind": "deny_tool", "tool": "shell", "severity": "warning"},
        {"id": "first", "kind": "deny_tool", "tool": "sh*"},
        {"id": "second", "kind": "allow_tools", "tools": ["search"]}]}
    steps = [*START, *call("c1", "shell"), *DONE]
    run = run_agent(tmp_path, steps, contract, {"version": 1, "tools": {}}, enforce=True, safety_exit=7)
    denied = run.bare()[2]
    assert denied["data"] == {"rule_ids": ["first", "second"]}
    assert denied["reason"].startswith("first: ")
    prevented = {(v.rule_id, v.prevented) for v in run.report.violations}
    assert prevented == {("warn-only", True), ("first", True), ("second", True)}
    assert run.code == 7   # --safety-exit: a call was denied

def test_a_denial_lists_the_first_5000_firing_rules_and_how_many_more_so_its_line_fits(tmp_path: Path) -> None:
    """Ten thousand rules with ids of 128 characters would make a `tool.denied` line over the
    trace's line limit: it lists the first 5,000 and counts the rest, and the agent is denied."""
    ids = [f"{n:05d}" + "r" * 123 for n in range(5_002)]
    contract = {"version": 2, "name": "c",
                "rules": [{"id": rule_id, "kind": "deny_tool", "tool": "zz"} for rule_id in ids]}
    steps = [*START, *call("c1", "zz"), *DONE]
    run = run_agent(tmp_path, steps, contract, {"version": 1, "tools": {}}, enforce=True)
    denied = run.bare()[2]
    assert denied["type"] == "tool.denied"
    assert denied["data"] == {"rule_ids": ids[:5_000], "rule_ids_left_out": 2}
    assert run.bare()[-1]["type"] == "run.completed"
    assert run.replies[1]["type"] == "tool.denied"
    assert run.info.denied == 1



@pytest.mark.parametrize(("safety_exit", "code"), [(1, 1), (7, 7)])
def test_a_denied_call_the_check_finds_nothing_at_still_fails_the_run(tmp_path: Path, safety_exit: int,
                                                                      code: int) -> None:
    """Point 74: under `count: successful` a call is denied once the earlier successful calls
    reach `max`; the denied call has no result, so the check finds nothing. Point 84: a call
    denied under --enforce is exit N (--safety-exit, default 1) all the same, and every format's
    verdict says so."""
    contract = {"version": 2, "name": "c", "rules": [
        {"id": "one-search", "kind": "tool_calls", "tool": "search", "max": 1, "count": "successful"}]}
    fixtures = {"version": 1, "tools": {"search": {"ok": True, "result": {"hits": []}}}}
    steps = [*START, *call("c1", "search"), *call("c2", "search"), *DONE]
    run = run_agent(tmp_path, steps, contract, fixtures, enforce=True, safety_exit=safety_exit)
    assert [event["type"] for event in run.events].count("tool.denied") == 1
    assert (run.report.passed, run.report.error_count, run.info.denied, run.code) == (True, 0, 1, code)
    assert verdict(run.report) == "failed"
    # the reason says the count and the bound (it said "the call is beyond the rule's bound": hunt 70)
    [denial] = [event for event in run.events if event["type"] == "tool.denied"]
    assert denial["reason"] == ("one-search: search was called successfully 1 time, as many as the 1 allowed: one "
                                "more success would be too many")


def test_sarif_says_a_violation_was_prevented_and_how_the_run_went(tmp_path: Path) -> None:
    """Point 75: `prevented: true` on a violation at a denied call; point 83: the `record` object
    in every format. SARIF carries them in the result's and the run's property bags."""
    steps = [*START, *call("c1", "shell.exec"), *DONE]
    run = run_agent(tmp_path, steps, V2, FIXTURES, enforce=True)
    log = json.loads(sarif.render(run.report))
    (result,) = log["runs"][0]["results"]
    assert (result["ruleId"], result["properties"]["code"], result["properties"]["prevented"]) == (
        "no-shell", "deny_tool.denied", True)
    record_info = log["runs"][0]["properties"]["record"]
    assert (record_info["run_id"], record_info["ended_by"], record_info["denied"]) == ("fake-run", "completed", 1)
    sarif_validator().validate(log)


def test_text_and_markdown_say_a_violation_was_prevented(tmp_path: Path) -> None:
    """Point 75's `prevented: true`, in the formats people read: beside the code, as `inconclusive` is."""
    from agent_invariants.render import markdown, text

    steps = [*START, *call("c1", "shell.exec"), *DONE]
    run = run_agent(tmp_path, steps, V2, FIXTURES, enforce=True)
    assert "[deny_tool.denied, prevented] " in text.render(run.report)
    assert "deny_tool.denied, prevented" in markdown.render(run.report)
    (tmp_path / "plain").mkdir()
    unenforced = run_agent(tmp_path / "plain", steps, V2, FIXTURES, enforce=False)
    assert "[deny_tool.denied] " in text.render(unenforced.report)


def test_calls_no_fixture_key_answers_are_numbered_per_tool(tmp_path: Path) -> None:
    """Point 72: one `record.fixture_miss {seq, call_id, tool, call_index}` per miss; point 70
    numbers a call among those of its key, and for a tool no key names, among its own calls
    (as an exact key would): 0, 1 for `lookup`, 0 for `mail`, not 0 for every call."""
    steps = [*START, *call("c1", "lookup"), *call("c2", "mail"), *call("c3", "lookup"), *DONE]
    run = run_agent(tmp_path, steps, V2, {"version": 1, "tools": {"search": {"result": 1}}})
    misses = [(finding.call_id, finding.call_index) for finding in run.info.findings]
    assert misses == [("c1", 0), ("c2", 0), ("c3", 1)]


def test_without_enforce_the_call_is_answered_and_the_check_fails_it(tmp_path: Path) -> None:
    steps = [*START, *call("c1", "orders.get"), *call("c2", "refund", {"order": "A9", "amount": 10}), *DONE]
    run = run_agent(tmp_path, steps, V2, FIXTURES, safety_exit=5)
    assert [event["type"] for event in run.events].count("tool.denied") == 0
    assert run.violations() == [("refund-approved", 4, "approval_bound.missing")]
    assert run.code == 5   # approval_bound is a safety kind


# --- endings ----------------------------------------------------------------------------------

def _ending(run, reason: str) -> dict:  # type: ignore[no-untyped-def]
    last = run.bare()[-1]
    assert last["type"] == "run.failed" and last["reason"] == reason
    assert last["data"]["attested_by"] == "harness"
    assert run.info.ended_by == reason
    assert [f.code for f in run.info.findings if f.code == "record.ended"] == ["record.ended"]
    assert run.report.partial is True
    return last


@pytest.mark.parametrize(("steps", "reason", "offending"), [
    ([*START, {"raw": "not json\n"}], "protocol:bad_json", {"line": 1, "excerpt": "not json"}),
    ([*START, {"raw": "[1, 2]\n"}], "protocol:bad_json", {"line": 1, "excerpt": "[1, 2]"}),
    ([*START, {"raw": '{"type": "tool.call", "call_id": "c", "tool": "t"}\r\n\n  \n{"type": "x.y"}\n'}],
     "protocol:unknown_type:x.y", {"line": 4, "type": "x.y", "excerpt": '{"type": "x.y"}'}),
    ([*START, send("tool.call", call_id="c", tool="t", seq=3)], "protocol:field:tool.call.seq",
     {"line": 1, "type": "tool.call"}),
    ([*START, send("tool.call", call_id="c")], "protocol:field:tool.call.tool", {"line": 1, "type": "tool.call"}),
    ([*START, send("agent.message", confidence=2)], "protocol:field:agent.message.confidence",
     {"line": 1, "type": "agent.message"}),
    ([*START, *call("c", "t"), send("tool.call", call_id="c", tool="t")], "protocol:duplicate_call_id",
     {"line": 2, "type": "tool.call"}),
    ([*START, send("approval.request", approval_id="a", tool="t"), {"recv": 1},
      send("approval.request", approval_id="a", tool="t")], "protocol:duplicate_approval_id",
     {"line": 2, "type": "approval.request"}),
    ([*START, {"raw": b"\xff\xfe".decode("utf-8", "surrogateescape") + "\n"}], "protocol:bad_json",
     {"line": 1}),
    ([*START, {"raw": '{"type": "telemetry.x", "data": null}\n'}], "protocol:field:telemetry.x.data",
     {"line": 1, "type": "telemetry.x"}),
    ([*START, {"raw": '{"type": "telemetry.x", "data": {"a": ' + "[" * 600 + "]" * 600 + "}}\n"}],
     "protocol:bad_json", {"line": 1}),   # check reads 500 levels at most
])
def test_protocol_errors_end_the_run_and_the_offending_line_is_not_recorded(
        tmp_path: Path, steps: list, reason: str, offending: dict) -> None:
    run = run_agent(tmp_path, [*steps, {"sleep": 5}], V2, {"version": 1, "tools": {"t": 1}})
    last = _ending(run, reason)
    assert {key: last["data"]["offending"][key] for key in offending} == offending
    accepted = {"protocol:unknown_type:x.y": ["tool.call", "tool.result"],
                "protocol:duplicate_call_id": ["tool.call", "tool.result"],
                "protocol:duplicate_approval_id": ["approval.requested", "approval.granted"]}.get(reason, [])
    assert [event["type"] for event in run.events] == ["run.start", *accepted, "run.failed"]   # nothing else
    assert run.code == 2


def test_a_lone_surrogate_escape_from_the_agent_reads_as_a_replacement_character(tmp_path: Path) -> None:
    """Found by the fourth hunt: JSON.stringify writes `\\ud83d` for a string cut inside an emoji;
    the run ended as protocol:bad_json, though `check` reads the same line in a trace as U+FFFD."""
    raw = '{"type": "agent.message", "text": "thumbs \\ud83d, \\ud83d\\ude00 whole"}\n'
    run = run_agent(tmp_path, [*START, {"raw": raw}, *DONE], V2, FIXTURES)
    assert run.info.ended_by == "completed" and run.code == 0
    assert run.events[1]["data"] == {"text": "thumbs \ufffd, \U0001F600 whole"}


def test_a_line_of_numbers_written_short_within_the_cap_is_recorded_and_reads_back(tmp_path: Path) -> None:
    """Point 68: a line within the agent's cap makes a trace line `check` reads. msgspec writes
    `1E15` as `1000000000000000.0` (4 bytes become 18): a line of them near the cap ended the run as
    output_limit, found by an outside reading of record. Such a line is written with each number
    as short as it reads back; a line that fits is written as before (`100.0`, in full)."""
    numbers = ["1E15", "-1.5E20", "25e-8", "12e1"] * 43_000
    raw = '{"type": "telemetry.x", "data": {"n": [' + ",".join(numbers) + "]}}\n"
    assert len(raw) < 1_040_384
    run = run_agent(tmp_path, [*START, {"raw": raw}, {"raw": '{"type": "telemetry.x", "data": {"n": [1E2]}}\n'},
                               *DONE], V2, FIXTURES)
    assert run.info.ended_by == "completed" and run.code == 0
    lines = run.trace.read_bytes().splitlines()
    assert b'"n":[1e15,-15e19,25e-8,12e1,1e15,' in lines[1] and len(lines[1]) <= len(raw) + 100
    assert b'"n":[100.0]' in lines[2]
    assert run.events[1]["data"]["n"] == [1e15, -1.5e20, 25e-8, 120.0] * 43_000
    assert all(type(number) is float for number in run.events[1]["data"]["n"])


def test_the_writer_refuses_a_line_longer_than_check_reads_and_writes_nothing_of_it(tmp_path: Path) -> None:
    """The last guard of a trace line (what the harness adds, past its 8 KiB): an event over 1 MiB
    as written, even with its numbers short, is not written, and its seq is not spent."""
    path = tmp_path / "t.jsonl"
    writer = TraceWriter(str(path), "r", Clock(fake=True), force=False)
    writer.write("agent.message", {}, {"text": "before"})
    with pytest.raises(LineTooLong):
        writer.write("agent.message", {}, {"text": "x" * MAX_TRACE_LINE})
    with pytest.raises(LineTooLong):
        writer.write("telemetry.x", {}, {"n": [1e15] * 300_000})   # 1.5 MB short, 5.7 MB in full
    writer.write("telemetry.x", {}, {"n": [1e15] * 100_000})       # 1.9 MB in full, 0.5 MB short
    writer.close()
    lines = path.read_bytes().splitlines()
    assert [json.loads(line)["seq"] for line in lines] == [1, 2]
    assert lines[1].startswith(b'{"seq":2,"type":"telemetry.x",') and b'"n":[1e15,1e15,' in lines[1]


def test_a_last_line_without_a_newline_is_read_at_the_end(tmp_path: Path) -> None:
    run = run_agent(tmp_path, [*START, {"raw": '{"type": "run.completed", "status": "completed"}'}], V2, FIXTURES)
    assert run.bare() == [{"type": "run.start", "data": {"input": {"ticket": "T-7"}, "protocol": 1}},
                          {"type": "run.completed", "status": "completed"}]
    assert run.info.ended_by == "completed" and run.code == 0


def test_a_message_after_the_terminal_fails_the_run_after_the_agents_terminal(tmp_path: Path) -> None:
    run = run_agent(tmp_path, [*START, *DONE, send("agent.message", text="one more")], V2, FIXTURES)
    assert [e["type"] for e in run.events] == ["run.start", "run.completed", "run.failed"]
    _ending(run, "protocol:after_terminal")


@pytest.mark.parametrize(("steps", "reason"), [
    ([*START, {"exit": 3}], "exit:3"),
    ([*START, {"exit": 0}], "exit:0"),
    ([*START, *DONE, {"exit": 4}], "exit:4"),
    ([*START, {"kill": "SIGKILL"}], "signal:SIGKILL"),
])
def test_exits_before_the_terminal_and_failing_exits_after_it_end_the_run(tmp_path: Path, steps: list,
                                                                          reason: str) -> None:
    run = run_agent(tmp_path, steps, V2, FIXTURES)
    _ending(run, reason)
    terminal = ["run.completed"] if reason == "exit:4" else []
    assert [event["type"] for event in run.events] == ["run.start", *terminal, "run.failed"]
    assert run.code == 2


def test_the_agent_may_end_by_reporting_its_own_failure(tmp_path: Path) -> None:
    run = run_agent(tmp_path, [*START, send("run.failed", reason="gave up", status="failed")], V2, FIXTURES)
    assert run.bare()[-1] == {"type": "run.failed", "status": "failed", "reason": "gave up",
                              "data": {"attested_by": "agent"}}
    assert run.info.ended_by == "failed" and run.info.findings == [] and run.code == 0


def test_idle_and_run_timeouts(tmp_path: Path) -> None:
    idle = run_agent(tmp_path, [*START, {"sleep": 5}], V2, FIXTURES, name="idle", idle_timeout_ms=300)
    _ending(idle, "timeout:idle")
    assert [event["type"] for event in idle.events] == ["run.start", "run.failed"]
    busy = [*START] + [send("telemetry.tick")] + [{"sleep": 0.05}, send("telemetry.tick")] * 40
    whole = run_agent(tmp_path, busy, V2, FIXTURES, name="whole", timeout_ms=400, idle_timeout_ms=300)
    _ending(whole, "timeout:run")
    assert whole.bare()[1] == {"type": "telemetry.tick"}
    assert {event["type"] for event in whole.events[1:-1]} == {"telemetry.tick"}


def test_an_agent_that_ignores_sigterm_is_killed_and_nothing_is_left(tmp_path: Path) -> None:
    started = time.monotonic()
    run = run_agent(tmp_path, [*START, {"ignore_term": True}, {"grandchild": 30}, {"sleep": 30}], V2, FIXTURES,
                    idle_timeout_ms=200)
    _ending(run, "timeout:idle")
    assert [event["type"] for event in run.events] == ["run.start", "run.failed"]
    assert run.info.exit_status == -signal.SIGKILL
    assert time.monotonic() - started < 10


def test_a_grandchild_holding_stdout_does_not_keep_the_run_open(tmp_path: Path) -> None:
    started = time.monotonic()
    run = run_agent(tmp_path, [*START, {"grandchild": 30}, *DONE], V2, FIXTURES, idle_timeout_ms=500)
    assert run.info.ended_by == "completed" and run.code == 0   # the 2 s grace is no idle time
    assert time.monotonic() - started < 10


def test_stdout_closed_while_the_agent_runs_on(tmp_path: Path) -> None:
    run = run_agent(tmp_path, [*START, {"close_stdout": True}, {"sleep": 30}], V2, FIXTURES)
    _ending(run, "protocol:stdout_closed")
    assert [event["type"] for event in run.events] == ["run.start", "run.failed"]


def test_output_caps(tmp_path: Path) -> None:
    line = run_agent(tmp_path, [*START, send("telemetry.a"), {"flood": 1_040_385}, {"sleep": 5}], V2, FIXTURES,
                     name="line")
    assert _ending(line, "output_limit")["data"]["limit"] == "line"
    assert [event["type"] for event in line.events] == ["run.start", "telemetry.a", "run.failed"]
    fits = run_agent(tmp_path, [*START, {"raw": "{" + '"type": "agent.message", "text": "' + "x" * (1_040_384 - 39)
                                         + '"}\n'}, *DONE], V2, FIXTURES, name="fits")
    assert fits.info.ended_by == "completed"
    many = [*START] + [{"raw": ('{"type": "telemetry.x", "data": {"p": "' + "y" * 1_000_000 + '"}}\n')}] * 70
    total = run_agent(tmp_path, many, V2, FIXTURES, name="total")
    assert _ending(total, "output_limit")["data"]["limit"] == "total"
    assert [event["type"] for event in total.events] == ["run.start", *["telemetry.x"] * 67, "run.failed"]   # 67 fit


def test_stderr_is_kept_beside_the_trace(tmp_path: Path) -> None:
    run = run_agent(tmp_path, [*START, {"stderr": "warming up\n"}, *DONE], V2, FIXTURES)
    assert run.info.stderr_bytes == 11
    assert Path(run.info.stderr_log).read_text(encoding="utf-8") == "warming up\n"


def test_the_agent_gets_the_environment_and_folder_it_is_told(tmp_path: Path) -> None:
    folder = tmp_path / "work"
    folder.mkdir()
    script = tmp_path / "env_agent.py"
    script.write_text(
        "import json, os, sys\n"
        "sys.stdin.readline()\n"
        "print(json.dumps({'type': 'run.completed', 'output': {'cwd': os.getcwd(), "
        "'protocol': os.environ.get('AGENT_INVARIANTS_PROTOCOL'), 'run': os.environ.get('AGENT_INVARIANTS_RUN_ID'), "
        "'set': os.environ.get('SET_ME'), 'home': os.environ.get('HOME'), 'stdin_tty': sys.stdin.isatty()}}))\n",
        encoding="utf-8")
    contract, fixtures = _inputs(tmp_path)
    out = tmp_path / "t.jsonl"
    record(contract, [sys.executable, str(script)], RecordOptions(
        fixtures=str(fixtures), out=str(out), fake_clock=True, env=["SET_ME=yes", "HOME"], env_clear=True,
        cwd=str(folder)))
    output = json.loads(out.read_text(encoding="utf-8").splitlines()[-1])["output"]
    import os

    assert output == {"cwd": str(folder), "protocol": "1", "run": "fake-run", "set": "yes",
                      "home": os.environ.get("HOME"), "stdin_tty": False}


def test_an_env_key_record_does_not_have_is_said(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`--env KEY` passes record's value on; when record has none, the agent gets none, and
    record says so (it was dropped without a word: hunt 70)."""
    monkeypatch.delenv("NOT_SET_ANYWHERE", raising=False)
    script = tmp_path / "env_agent.py"
    script.write_text("import json, os, sys\nsys.stdin.readline()\nhas = 'NOT_SET_ANYWHERE' in os.environ\n"
                      "print(json.dumps({'type': 'run.completed', 'output': {'has': has}}))\n", encoding="utf-8")
    contract, fixtures = _inputs(tmp_path)
    out = tmp_path / "t.jsonl"
    heard: list[str] = []
    record(contract, [sys.executable, str(script)], RecordOptions(
        fixtures=str(fixtures), out=str(out), fake_clock=True, env=["NOT_SET_ANYWHERE"], env_clear=True), heard.append)
    assert json.loads(out.read_text(encoding="utf-8").splitlines()[-1])["output"] == {"has": False}
    assert heard == ["warning: --env NOT_SET_ANYWHERE: not set in record's environment, so the agent gets no such "
                     "variable"]


# --- bad input before the start ---------------------------------------------------------------

def test_out_that_names_a_folder_is_refused_before_anything_is_made(tmp_path: Path) -> None:
    """`--out runs/` names a folder: the folder was made, then the trace could not be written in its
    place ("Is a directory"), an empty folder left behind. Refused first, nothing made, the agent
    not started."""
    contract, fixtures = _inputs(tmp_path)
    marker = tmp_path / "started"
    command = [sys.executable, "-c", f"open({str(marker)!r}, 'w').close()"]
    with pytest.raises(InputError) as refused:
        record(contract, command, RecordOptions(fixtures=str(fixtures), out=f"{tmp_path / 'runs'}/"))
    assert str(refused.value) == f"{tmp_path / 'runs'}/: names a folder (it ends with a slash): name the file to write"
    for folder in (f"{tmp_path / 'new'}/.", f"{tmp_path / 'x' / 'y'}/.."):   # (made, then "File exists")
        with pytest.raises(InputError) as refused:
            record(contract, command, RecordOptions(fixtures=str(fixtures), out=folder))
        assert str(refused.value) == f"{folder}: names a folder: name the file to write"
    assert sorted(path.name for path in tmp_path.iterdir()) == sorted(path.name for path in (contract, fixtures))


def test_out_must_be_new_and_force_replaces_only_regular_files(tmp_path: Path) -> None:
    contract, fixtures = _inputs(tmp_path)
    out = tmp_path / "t.jsonl"
    out.write_text("keep me\n", encoding="utf-8")
    command = [sys.executable, "-c", "pass"]
    with pytest.raises(InputError, match="already exists"):
        record(contract, command, RecordOptions(fixtures=str(fixtures), out=str(out)))
    assert out.read_text(encoding="utf-8") == "keep me\n"
    with pytest.raises(InputError, match="is not a regular file"):
        record(contract, command, RecordOptions(fixtures=str(fixtures), out="/dev/null", force=True))
    forced = record(contract, command, RecordOptions(fixtures=str(fixtures), out=str(out), force=True))
    assert forced.report.record.ended_by == "exit:0"
    assert json.loads(out.read_text(encoding="utf-8").splitlines()[0])["type"] == "run.start"
    Path(f"{out}.stderr.log").write_text("an old log\n", encoding="utf-8")
    with pytest.raises(InputError) as refused:   # the trace and its log both there: the trace is named
        record(contract, command, RecordOptions(fixtures=str(fixtures), out=str(out)))
    assert str(refused.value) == f"{out}: already exists (use --force to replace it)"
    for force in (False, True):   # a folder: --force would not help, so it is not suggested
        with pytest.raises(InputError) as refused:
            record(contract, command, RecordOptions(fixtures=str(fixtures), out=str(tmp_path), force=force))
        assert str(refused.value) == f"{tmp_path}: is a directory"
    folder_link, fifo = tmp_path / "link", tmp_path / "fifo"
    folder_link.symlink_to(tmp_path / "runs", target_is_directory=True)
    (tmp_path / "runs").mkdir()
    os.mkfifo(fifo)
    for path in (folder_link, fifo, "/dev/null"):   # --force would not do: it is not suggested
        with pytest.raises(InputError) as refused:
            record(contract, command, RecordOptions(fixtures=str(fixtures), out=str(path)))
        assert str(refused.value) == f"{path}: is not a regular file; --force replaces only regular files"


def test_out_never_replaces_an_input_of_the_run(tmp_path: Path) -> None:
    contract, fixtures = _inputs(tmp_path)
    for target in (contract, fixtures):
        before = target.read_bytes()
        with pytest.raises(InputError, match="is an input of the run"):
            record(contract, [sys.executable, "-c", "pass"],
                   RecordOptions(fixtures=str(fixtures), out=str(target), force=True))
        assert target.read_bytes() == before


def test_a_baseline_with_a_mistyped_field_is_refused(tmp_path: Path) -> None:
    baseline = tmp_path / "b.jsonl"
    baseline.write_text('{"seq": 1, "type": "tool.call", "tool": "t", "call_id": "c"}\n'
                        '{"seq": 2, "type": "tool.result", "call_id": "c", "duration_ms": "abc"}\n', encoding="utf-8")
    contract, _ = _inputs(tmp_path)
    with pytest.raises(InputError, match=r"event seq 2: \$\.duration_ms"):
        record(contract, [sys.executable, "-c", "pass"], RecordOptions(replay=str(baseline),
                                                                       out=str(tmp_path / "t.jsonl")))


@pytest.mark.parametrize("partial_there", [False, True])
def test_a_trace_that_cannot_be_written_ends_the_run_and_keeps_what_was_written_set_aside(
        tmp_path: Path, partial_there: bool) -> None:
    """A full disk (here a file size limit) ends the run; the events written before are kept,
    whole lines only, renamed `<out>.partial`: left as `out`, nothing in them says the run was
    cut short, and `check` passed it as a whole run (a second run found `out` taken, too). A
    `.partial` already there (an earlier full disk's) is not replaced: the trace is `.partial-2`."""
    contract, fixtures = _inputs(tmp_path)
    script = tmp_path / "s.json"
    script.write_text(json.dumps([*START] + [send("telemetry.x", data={"pad": "p" * 1000})] * 50 + [{"sleep": 30}]),
                      encoding="utf-8")
    trace, partial = tmp_path / "t.jsonl", tmp_path / "t.jsonl.partial"
    if partial_there:
        partial.write_text("an earlier run's\n", encoding="utf-8")
    command = (f"ulimit -f 16; exec {sys.executable} -m agent_invariants record --contract {contract} "
               f"--fixtures {fixtures} --out {trace} --fake-clock --env {MARK} -- {sys.executable} {AGENT} {script} "
               f"{tmp_path / 'r.jsonl'}")
    result = subprocess.run(["bash", "-c", command], capture_output=True, text=True, timeout=30)
    assert result.returncode == 2
    kept = partial if not partial_there else tmp_path / "t.jsonl.partial-2"
    lines = kept.read_bytes().splitlines(keepends=True)
    assert lines and all(line.endswith(b"\n") for line in lines) and len(kept.read_bytes()) <= 16 * 1024
    assert [json.loads(line)["seq"] for line in lines] == list(range(1, len(lines) + 1))
    assert result.stderr == (f"agent-invariants: {trace}: cannot write the trace: File too large; the {len(lines)} "
                             f"events written before are kept in {kept}, cut short\n")
    assert not trace.exists()
    if partial_there:
        assert partial.read_text(encoding="utf-8") == "an earlier run's\n"


def test_a_command_that_cannot_start_writes_no_trace(tmp_path: Path) -> None:
    contract, fixtures = _inputs(tmp_path)
    out = tmp_path / "t.jsonl"
    with pytest.raises(InputError, match="no-such-agent-cmd: cannot start"):
        record(contract, ["no-such-agent-cmd"], RecordOptions(fixtures=str(fixtures), out=str(out)))
    assert not out.exists()


# --- the CLI ------------------------------------------------------------------------------------

@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGHUP])
def test_the_cli_runs_a_recorded_run_and_an_interrupt_ends_it(tmp_path: Path, signum: int) -> None:
    contract, fixtures = _inputs(tmp_path)
    script = tmp_path / "s.json"
    script.write_text(json.dumps([*START, {"sleep": 30}]), encoding="utf-8")
    process = subprocess.Popen(
        [sys.executable, "-m", "agent_invariants", "record", "--contract", str(contract), "--fixtures", str(fixtures),
         "--out", str(tmp_path / "t.jsonl"), "--fake-clock", "--format", "json", "--env", MARK, "--",
         sys.executable, str(AGENT), str(script), str(tmp_path / "r.jsonl")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 10
    while not (tmp_path / "r.jsonl").exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    process.send_signal(signum)
    out, err = process.communicate(timeout=15)
    assert process.returncode == 2, err
    report = json.loads(out)
    assert report["record"]["ended_by"] == "interrupted"
    assert report["partial"] is True
    assert report["record"]["findings"][0]["code"] == "record.ended"


# --- one evaluator, on random runs --------------------------------------------------------------

POOL = [
    {"id": "no-shell", "kind": "deny_tool", "tool": "shell.*"},
    {"id": "refund-approved", "kind": "approval_bound", "tool": "refund", "bind": "args_subset"},
    {"id": "old-approval", "kind": "require_approval", "tool": "refund", "severity": "warning"},
    {"id": "lookup-first", "kind": "precedence", "before": {"tool": "get"}, "after": {"tool": "refund"},
     "correlate": ["order"]},
    {"id": "few-searches", "kind": "tool_calls", "tool": "search", "max": 2},
    {"id": "retries", "kind": "retry_limit", "max_attempts": 2, "group_by": "tool"},
    {"id": "stop", "kind": "stop_is_final"},
    {"id": "small", "kind": "tool_args", "tool": "refund", "match": {"amount": {"$lte": 50}}},
    {"id": "answered", "kind": "tool_result_required"},
    {"id": "claims", "kind": "completion_requires_outcome", "outcome_id": "refund-done"},
    {"id": "ends-well", "kind": "run_status", "equals": "completed"},
    {"id": "must-search", "kind": "require_event", "match": {"type": "tool.call", "tool": "search"}, "min": 1},
]


def _random_steps(chance: random.Random) -> list[dict]:
    steps: list[dict] = [*START]
    for at in range(chance.randint(0, 8)):
        pick = chance.random()
        if pick < 0.5:
            tool = chance.choice(["search", "get", "refund", "shell.run", "unknown"])
            args = chance.choice([None, {"order": chance.choice(["A1", "A2"]), "amount": chance.choice([5, 10, 90])}])
            steps += call(f"c{at}", tool, args)
        elif pick < 0.6:
            steps += [send("approval.request", approval_id=f"a{at}", tool="refund",
                           args={"order": "A1", "amount": chance.choice([5, 90])}), {"recv": True}]
        elif pick < 0.7:
            steps.append(send("approval.granted", approval_id=f"g{at}", tool="refund", args={"order": "A2"}))
        elif pick < 0.75:
            steps.append(send("control.stop", reason="user"))
        elif pick < 0.85:
            steps.append(send("agent.message", text="working", claims_completion=chance.random() < 0.3))
        else:
            steps.append(send("outcome.observed", outcome_id="refund-done", verdict="satisfied"))
    ending = chance.choice(["completed", "failed", "exit", "bad", "hang", "completed"])
    steps += {"completed": [send("run.completed", status=chance.choice(["completed", "failed"]),
                                 claims_completion=True)],
              "failed": [send("run.failed", reason="gave up")], "exit": [{"exit": 1}],
              "bad": [{"raw": "{oops\n"}, {"sleep": 5}], "hang": [{"sleep": 5}]}[ending]
    return steps


@pytest.mark.parametrize("seed", range(16))
def test_record_and_a_later_check_agree_on_random_runs(tmp_path: Path, seed: int) -> None:
    chance = random.Random(seed)
    contract = {"version": 2, "name": "random", "rules": chance.sample(POOL, chance.randint(1, 6))}
    fixtures = {"version": 1, "tools": {"search": {"$cases": [{"call_index": 0, "result": "hit"},
                                                              {"ok": False, "result": "miss"}]},
                                        "get": {"order": "A1"}, "refund": {"ok": True},
                                        "shell.*": "done", "verify": {"$cases": [
                                            {"observe": {"outcome_id": "refund-done", "verdict": "satisfied"}}]}},
                "approvals": [{"tool": "refund", "args": {"amount": {"$lte": 10}}, "decision": "approve"}]}
    run = run_agent(tmp_path, _random_steps(chance), contract, fixtures, enforce=chance.random() < 0.5,
                    idle_timeout_ms=250, lint=False)   # run_agent checks the agreement
    assert run.numbered()
    assert run.code in (0, 1, 2)


# --- check --safety-exit (point 84) ---------------------------------------------------------------

SAFETY = {"version": 1, "name": "s", "rules": [
    {"id": "no-shell", "kind": "deny_tool", "tool": "shell"},
    {"id": "searched", "kind": "require_event", "match": {"type": "tool.call", "tool": "search"}, "min": 1}]}


@pytest.mark.parametrize(("events", "code", "safety"), [
    ([{"seq": 1, "type": "tool.call", "tool": "shell"}], 9, 1),                     # a safety part fails
    ([{"seq": 1, "type": "tool.call", "tool": "ls"}], 1, 0),                        # only a liveness part
    ([{"seq": 1, "type": "tool.call", "tool": "search"}], 0, 0),
])
def test_check_safety_exit_tells_a_safety_failure_apart(cli, write, events: list, code: int, safety: int) -> None:
    write("c.json", SAFETY)
    write("t.jsonl", "".join(json.dumps(event) + "\n" for event in events))
    result = cli("check", "-c", "c.json", "-t", "t.jsonl", "--safety-exit", "9", "-f", "json")
    assert result.returncode == code, result.stderr
    assert json.loads(result.stdout)["safety_error_count"] == safety
    plain = cli("check", "-c", "c.json", "-t", "t.jsonl", "-f", "json")
    assert plain.returncode == min(code, 1)
    assert "safety_error_count" not in json.loads(plain.stdout)   # version-1 reports are unchanged without it


def test_check_safety_exit_over_several_traces(cli, write) -> None:
    write("c.json", SAFETY)
    write("runs/a.jsonl", '{"seq": 1, "type": "tool.call", "tool": "search"}\n')
    write("runs/b.jsonl", '{"seq": 1, "type": "tool.call", "tool": "search"}\n{"seq": 2, "type": "tool.call", '
                          '"tool": "shell"}\n')
    assert cli("check", "-c", "c.json", "-t", "runs", "--safety-exit", "3", "-q").returncode == 3


# --- the report in every format ---------------------------------------------------------------------

def test_every_format_shows_the_recorded_run_and_its_findings(tmp_path: Path) -> None:
    steps = [*START, *call("c1", "nothing.here"), {"sleep": 5}]
    run = run_agent(tmp_path, steps, V2, FIXTURES, idle_timeout_ms=200)
    from agent_invariants.render import RenderOptions, renderer
    from agent_invariants.sources import Sources

    report = run.report
    shown = {name: renderer(name).render(report, RenderOptions(sources=Sources(report)))
             for name in ("text", "json", "markdown", "junit", "sarif", "github")}
    for name, text in shown.items():
        assert "No fixture answers call c1 of nothing" in text and "record.fixture_miss" in text, name
        assert "timeout:idle" in text, name
    assert json.loads(shown["json"])["record"]["findings"][1] == {
        "code": "record.ended", "level": "error", "message": "The harness ended the run: timeout:idle.", "seq": 4}
    sarif = json.loads(shown["sarif"])["runs"][0]
    found = {result["ruleId"]: result["locations"][0]["physicalLocation"]["region"]["startLine"]
             for result in sarif["results"]}
    assert found == {"record.fixture_miss": 2, "record.ended": 4}
    assert {rule["id"] for rule in sarif["tool"]["driver"]["rules"]} >= {"record.fixture_miss", "record.ended"}
    assert "title=record.fixture_miss::" in shown["github"]
    assert 'type="record.ended"' in shown["junit"]


def test_strings_the_harness_writes_fit_the_trace_limits_in_utf16_units(tmp_path: Path) -> None:
    contract = {"version": 1, "name": "c", "rules": [{"id": "r", "kind": "deny_tool", "tool": "*"}]}
    steps = [*START, *call("c", "😀" * 250), *DONE]
    run = run_agent(tmp_path, steps, contract, {"version": 1, "tools": {}}, enforce=True)
    reason = run.bare()[2]["reason"]
    assert reason.startswith("r: ") and len(reason.encode("utf-16-le")) // 2 <= 500
    assert run.info.ended_by == "completed"
    path = tmp_path / "f.json"
    path.write_text(json.dumps({"version": 1, "tools": {}, "approvals": [
        {"tool": "t", "decision": "approve", "approver": "😀" * 300}]}), encoding="utf-8")
    from agent_invariants.record.fixtures import load_fixtures

    with pytest.raises(InputError, match=r"\$\.approvals\[0\]\.approver: must be a string of 1\.\.500"):
        load_fixtures(path)


def test_a_denied_call_uses_up_its_replayed_occurrence_and_empty_data_is_kept(tmp_path: Path) -> None:
    baseline = tmp_path / "b.jsonl"
    baseline.write_text('{"seq": 1, "type": "tool.call", "tool": "t", "call_id": "x", "args": {"n": 1}}\n'
                        '{"seq": 2, "type": "tool.result", "call_id": "x", "ok": true, "result": "first"}\n',
                        encoding="utf-8")
    contract = {"version": 1, "name": "c", "rules": [{"id": "r", "kind": "require_approval", "tool": "t"}]}
    steps = [*START, *call("c", "t", {"n": 1}, data={}), send("approval.granted", tool="t"),
             *call("d", "t", {"n": 1}), send("control.stop", data={}), *DONE]
    run = run_agent(tmp_path, steps, contract, {"version": 1, "tools": {"*": "ok"}}, enforce=True,
                    replay=str(baseline))
    assert [(e["type"], e.get("result"), e.get("data")) for e in run.bare()[1:]] == [
        ("tool.call", None, {}), ("tool.denied", None, {"rule_ids": ["r"]}),
        ("approval.granted", None, {"attested_by": "agent"}), ("tool.call", None, None),
        ("tool.result", "ok", {"fixture": {"key": "*"}}), ("control.stop", None, {}), ("run.completed", None, None)]


# --- tool faults (point 88) -------------------------------------------------------------------

FAULTS = {"version": 1, "tools": {
    "slow": {"$cases": [{"delay_ms": 300, "result": "late"}]},
    "stuck": {"$cases": [{"hang": True}]}}}


def test_a_slow_tool_answers_after_its_delay_and_the_delay_is_its_duration(tmp_path: Path) -> None:
    started = time.monotonic()
    run = run_agent(tmp_path, [*START, *call("c1", "slow"), *DONE], V2, FAULTS, idle_timeout_ms=200)
    assert time.monotonic() - started >= 0.3
    assert run.bare()[2] == {"type": "tool.result", "tool": "slow", "call_id": "c1", "ok": True, "result": "late",
                             "duration_ms": 300, "data": {"fixture": {"key": "slow", "case": 0}}}
    assert run.info.ended_by == "completed"   # the harness's delay is no idle time of the agent


def test_a_hanging_tool_never_answers(tmp_path: Path) -> None:
    waits = run_agent(tmp_path, [*START, *call("c1", "stuck"), *DONE], V2, FAULTS, name="waits", idle_timeout_ms=300)
    assert [event["type"] for event in waits.events] == ["run.start", "tool.call", "run.failed"]
    _ending(waits, "timeout:idle")
    gives_up = [*START, send("tool.call", call_id="c1", tool="stuck"), {"sleep": 0.1},
                send("run.completed", status="failed")]
    contract = {"version": 1, "name": "c", "rules": [{"id": "answered", "kind": "tool_result_required"}]}
    own = run_agent(tmp_path, gives_up, contract, FAULTS, name="own", idle_timeout_ms=2000)
    assert [event["type"] for event in own.events] == ["run.start", "tool.call", "run.completed"]
    assert own.violations() == [("answered", 2, "tool_result_required.missing")]


def test_bad_faults_are_refused(tmp_path: Path) -> None:
    from agent_invariants.record.fixtures import load_fixtures

    path = tmp_path / "f.json"
    for case, problem in [({"hang": True, "result": 1}, "$cases[0].hang: a case that hangs answers nothing"),
                          ({"delay_ms": -1}, "$cases[0].delay_ms: must be a number of milliseconds"),
                          ({"hang": "yes"}, "$cases[0].hang: must be true or false")]:
        path.write_text(json.dumps({"version": 1, "tools": {"x": {"$cases": [case]}}}), encoding="utf-8")
        with pytest.raises(InputError) as caught:
            load_fixtures(path)
        assert problem in str(caught.value)


# --- repeat runs (point 87) -------------------------------------------------------------------

COUNTING_AGENT = """import json, os, sys
sys.stdin.readline()
path = os.path.join(os.environ["COUNTER_DIR"], "count")
count = int(open(path).read()) + 1 if os.path.exists(path) else 1
open(path, "w").write(str(count))
value = count if os.environ.get("SHAPE") == "steady" or count < 3 else str(count)
print(json.dumps({"type": "run.completed", "status": "completed", "output": {"total": value}}), flush=True)
"""


@pytest.mark.parametrize(("shape", "code"), [("steady", 0), ("drifting", 1)])
def test_repeat_checks_every_run_and_the_stability_of_their_outputs(cli, write, tmp_path: Path, shape: str,
                                                                   code: int) -> None:
    write("c.json", V2)
    write("f.json", FIXTURES)
    write("agent.py", COUNTING_AGENT)
    result = cli("record", "-c", "c.json", "--fixtures", "f.json", "--repeat", "3", "--out-dir", "runs",
                 "--fake-clock", "-f", "json", "--env", f"COUNTER_DIR={tmp_path}", "--env", f"SHAPE={shape}",
                 "--env", MARK, "--", sys.executable, "agent.py")
    assert result.returncode == code, result.stderr
    report = json.loads(result.stdout)
    assert report["schema"] == "agent-invariants/check-batch/v1" and report["traces"] == 3
    assert [one["record"]["trace"] for one in report["reports"]] == [f"runs/run-{n}.jsonl" for n in (1, 2, 3)]
    assert all((tmp_path / "runs" / f"run-{n}.jsonl").is_file() for n in (1, 2, 3))
    stability = report["stability"]
    assert stability["measured"] is True and stability["stable"] is (shape == "steady")
    if shape == "drifting":
        assert [(entry["path"], entry["kind"]) for entry in stability["unstable"]] == [("total", "type")]
    text = cli("record", "-c", "c.json", "--fixtures", "f.json", "--repeat", "2", "--out-dir", "runs", "--force",
               "--fake-clock", "--env", f"COUNTER_DIR={tmp_path}", "--env", "SHAPE=steady", "--env", MARK, "--",
               sys.executable, "agent.py")
    assert "STABLE" in text.stdout and "2 traces: 2 passed, 0 failed" in text.stdout


def test_repeat_needs_an_out_dir_and_no_out(cli, write) -> None:
    write("c.json", V2)
    write("f.json", FIXTURES)
    alone = cli("record", "-c", "c.json", "--fixtures", "f.json", "--repeat", "2", "--", "true")
    assert alone.returncode == 2 and "--repeat N and --out-dir DIR go together" in alone.stderr
    both = cli("record", "-c", "c.json", "--fixtures", "f.json", "--repeat", "2", "--out-dir", "d", "--out", "t",
               "--", "true")
    assert both.returncode == 2 and "--out does not apply" in both.stderr


# --- redaction (point 86) ---------------------------------------------------------------------

SECRETS = ["sk-SECRET-123", "hunter2-PW", "tok-ABC-987", "tok-RESULT-555", "in-PW-777", "out-KEY-321"]


def test_redacted_values_reach_no_file_and_no_report_yet_the_rules_judge_them(cli, write, tmp_path: Path) -> None:
    write("c.json", {"version": 2, "name": "secrets", "rules": [
        {"id": "key-shape", "kind": "tool_args", "tool": "api.call", "match": {"api_key": {"$regex": "^sk-"}}},
        {"id": "key-pinned", "kind": "tool_args", "tool": "api.call", "match": {"api_key": "sk-OTHER"}}]})
    write("f.json", {"version": 1, "input": {"user": "ann", "password": "in-PW-777"}, "redact": ["token"],
                     "tools": {"api.call": {"session": {"token": "tok-RESULT-555"}}}})
    steps = [*START, *call("c1", "api.call", {"api_key": "sk-SECRET-123", "argv": ["--password", "hunter2-PW"],
                                              "note": "retry with token=tok-ABC-987"}),
             send("agent.message", text='connecting with API_KEY: "sk-SECRET-123"'),
             {"stderr": "debug: password=hunter2-PW token tok-ABC-987 --api_key sk-SECRET-123\n"},
             send("run.completed", output={"api_key": "out-KEY-321", "ok": True})]
    write("s.json", steps)
    private = tmp_path / "tmp"
    private.mkdir()
    for fmt in ("json", "text", "markdown", "junit", "sarif", "github"):
        result = cli("record", "-c", "c.json", "--fixtures", "f.json", "--out", "t.jsonl", "--force", "--fake-clock",
                     "--redact", "api_key", "--redact", "PASSWORD", "-f", fmt, "--env", MARK, "--",
                     sys.executable, str(AGENT), "s.json", "r.jsonl", env={"TMPDIR": str(private)})
        assert result.returncode == 1, result.stderr
        for secret in SECRETS:
            assert secret not in result.stdout, (fmt, secret)
            assert secret not in result.stderr, (fmt, secret)
        if fmt == "json":
            report = json.loads(result.stdout)
            # judged on the raw values: the regex holds, the pinned value does not
            assert [(r["rule_id"], r["passed"]) for r in report["results"]] == [("key-shape", True),
                                                                               ("key-pinned", False)]
            assert "[redacted]" in json.dumps(report["violations"][0]["evidence"])
    trace = (tmp_path / "t.jsonl").read_text(encoding="utf-8")
    log = (tmp_path / "t.jsonl.stderr.log").read_text(encoding="utf-8")
    for secret in SECRETS:
        assert secret not in trace and secret not in log, secret
    events = [json.loads(line) for line in trace.splitlines()]
    assert events[0]["data"]["input"] == {"user": "ann", "password": "[redacted]"}
    assert events[1]["args"] == {"api_key": "[redacted]", "argv": ["--password", "[redacted]"],
                                 "note": "retry with token=[redacted]"}
    assert events[2]["result"] == {"session": {"token": "[redacted]"}}
    assert events[3]["data"]["text"] == 'connecting with API_KEY: "[redacted]"'
    assert events[4]["output"] == {"api_key": "[redacted]", "ok": True}
    replies = [json.loads(line) for line in (tmp_path / "r.jsonl").read_text(encoding="utf-8").splitlines()]
    assert replies[0]["input"]["password"] == "in-PW-777"   # the agent itself gets the real values
    assert list(private.iterdir()) == []   # the raw copy the rules read is gone


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="a file without a name needs /proc/self/fd")
def test_record_killed_outright_leaves_no_raw_copy_of_a_redacted_secret(write, tmp_path: Path) -> None:
    """The rules judge the raw values, which a private copy holds while the run goes on. SIGKILL
    (a CI job's timeout, the out-of-memory killer) ends `record` with no handler: a copy with a
    name would stay in the temporary folder, secrets and all, so it never has one."""
    write("c.json", {"version": 2, "name": "secrets", "rules": [
        {"id": "key-shape", "kind": "tool_args", "tool": "api.call", "match": {"api_key": {"$regex": "^sk-"}}}]})
    write("f.json", {"version": 1, "tools": {"api.call": {"ok": True}}})
    ready = tmp_path / "agent.pid"
    write("s.json", [*START, *call("c1", "api.call", {"api_key": "sk-KILLED-4242"}), {"pid_file": str(ready)},
                     {"sleep": 60}])
    private = tmp_path / "tmp"
    private.mkdir()
    process = subprocess.Popen(
        [sys.executable, "-m", "agent_invariants", "record", "-c", "c.json", "--fixtures", "f.json", "--out",
         "t.jsonl", "--redact", "api_key", "--env", MARK, "--", sys.executable, str(AGENT), "s.json", "r.jsonl"],
        cwd=tmp_path, env={**os.environ, "TMPDIR": str(private)}, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while not (ready.exists() and ready.read_text()) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert ready.read_text(), "the agent never got its answer"
        process.kill()
        process.wait(10)
    finally:
        if ready.exists() and ready.read_text():
            os.kill(int(ready.read_text()), signal.SIGKILL)
        process.kill()
    written = (tmp_path / "t.jsonl").read_text(encoding="utf-8")
    assert '"api_key":"[redacted]"' in written and "sk-KILLED-4242" not in written
    assert list(private.iterdir()) == []


TEXT_FORMS = {   # secrets in text forms the text treatment misread, each in an agent's message and on stderr
    "escaped-quote": 'note {"token": "ab\\"SEC-QUOTE-1"} end',
    "escaped-key": 'note {"to\\u006ben":"SEC-KEY-2"} end',
    "escaped-key-whole": '{"to\\u006ben":"SEC-KEY-3"}',
    "quoted-flag": 'run --token "SEC-FLAG-4 x" now',
    "single-quoted-flag": "run --token 'SEC-FLAG-5 y' now",
    "before-a-dangling-key": '{"token": "ab\\"SEC-DANGLE-6"} then "token": "open',
}


def test_secrets_in_escaped_and_quoted_text_forms_reach_no_file(cli, write, tmp_path: Path) -> None:
    """A quote escaped inside a value (`"ab\"SECRET"`), a key written with an escape
    (`"to\u006ben"`, in JSON held in a string) and a quoted `--token "..."` were read as a value
    ending at the escaped quote, as no key at all, and as an empty value: the secret was written to
    the trace and the stderr log."""
    write("c.json", {"version": 1, "name": "c", "rules": [{"id": "no-shell", "kind": "deny_tool", "tool": "shell"}]})
    write("f.json", {"version": 1, "tools": {}})
    steps = [*START, *[send("agent.message", text=text) for text in TEXT_FORMS.values()],
             {"stderr": "\n".join(TEXT_FORMS.values()) + "\n"}, *DONE]
    write("s.json", steps)
    result = cli("record", "-c", "c.json", "--fixtures", "f.json", "--out", "t.jsonl", "--redact", "token", "-f",
                 "json", "--env", MARK, "--", sys.executable, str(AGENT), "s.json", "r.jsonl")
    assert result.returncode == 0, result.stderr
    written = (tmp_path / "t.jsonl").read_text(encoding="utf-8") + \
        (tmp_path / "t.jsonl.stderr.log").read_text(encoding="utf-8") + result.stdout + result.stderr
    for name, text in TEXT_FORMS.items():
        secret = text[text.index("SEC-"):].split('"')[0].split("'")[0].split(" ")[0]
        assert secret not in written, name
    messages = [json.loads(line)["data"]["text"] for line in (tmp_path / "t.jsonl").read_text(
        encoding="utf-8").splitlines() if '"agent.message"' in line]
    assert messages == ['note {"token": "[redacted]"} end', "[redacted]", '{"token": "[redacted]"}',
                        'run --token "[redacted]" now', "run --token '[redacted]' now", "[redacted]"]


ESCAPED_FORMS = [   # a value holding a JSON escape, a key written with an escape, a value past a line's end
    '{"token": "K01aXSEC\\"tail"}', '{"token": "K02aXSEC\\\\tail"}', '{"token": "K03aXSEC\\ttail"}',
    '{"token": "K04aXSEC\\u00e9tail"}', '{"token": "K07aXSEC\\/tail"}',
    '{"a": "{\\"token\\": \\"K14aXSEC\\\\\\"tail\\"}"}',
    'x --to\\u006ben K15aXSEC y', 'x --to\\u006ben "K71aXSEC q" y', 'x "--to\\u006ben" "K72aXSEC q" y',
    '{"a": "{\\"to\\\\u006ben\\": \\"K17aXSEC\\"}"}', '{"a": "{\\"t\\\\u006fken\\": \\"K86aXSEC\\"}"}',
    'x {\\"to\\\\u006ben\\": \\"K16aXSEC q\\"} y', 'x ["--token", "K74aXSEC"] y', 'x "--token" K75aXSEC y',
    'x -token K76aXSEC y', 'x --token "K77aXSEC never closed',
    'x "token": "K18aXSEC\nK18bXSEC" y', "x 'token': 'K23aXSEC\nK23bXSEC' y", 'x --token="K69aXSEC\nK69bXSEC" y',
    '{"a": "x \\"token\\": \\"K82aXSEC\\nK82bXSEC\\" y"}',
    # (hunt 109) colours around a key, YAML blocks, triple quotes, code and query forms, an element
    "\x1b[36mtoken\x1b[0m=\x1b[35mK30aXSEC\x1b[0m ok", "\x1b[32mtoken:\x1b[0m K31aXSEC",
    "auth:\n  token: |\n    K32aXSEC\n    K32bXSEC\n  user: bob", "token: >-\n  K33aXSEC\n  K33bXSEC\nx: 1",
    'token = """\nK34aXSEC\n"""', "token = \'\'\'K35aXSEC\nK35bXSEC\'\'\' rest", 'cfg["token"] = "K36aXSEC"',
    "os.environ['TOKEN']='K37aXSEC'", "user[token]=K38aXSEC&x=1", "token => 'K39aXSEC'", '"token" => "K40aXSEC"',
    "<token>K41aXSEC</token> ok", '{"a": "{\\"\\\\ttoken\\": \\"K42aXSEC\\"}"}', "token: [redacted] K43aXSEC",
    # (hunt 110) YAML blocks in a list, with a tag; string prefixes; Markdown; pairs, rows, columns
    "items:\n  - token: |\n      K44aXSEC\n      K44bXSEC\n  - name: x", "token: !vault |\n  K45aXSEC\nnext: 1",
    "token = b'K46aXSEC'", 'token = r"K47aXSEC"', "- **token**: K48aXSEC", "`token`: `K49aXSEC`",
    "| token | K50aXSEC |", "token\tK51aXSEC\tx", 'headers = [("token", "K52aXSEC")]', "token:\n  K53aXSEC\nx: 1",
    '{"ｔｏｋｅｎ": "K54aXSEC"}',
    # (hunt 111) a key touching another script's letters; a mark then more of the value; Go; a YAML list
    "请设置token=K57aXSEC", "Вашtoken: K58aXSEC", "token=[redacted],K59aXSEC", 'token := "K60aXSEC"',
    "token:\n- K61aXSEC\n- K61bXSEC\nx: 1",
    # (hunt 112) a value of letters alone, quoted by the report; Make's `?=`
    "token=abXSECcd", '{"token": "efXSECgh"}', "TOKEN ?= K71aXSEC",
]


@pytest.mark.parametrize("on_stderr", [False, True])
def test_secrets_written_with_escapes_or_past_a_line_end_reach_no_file_and_no_report(
        cli, write, tmp_path: Path, on_stderr: bool) -> None:
    """Each text is an agent's message and its final output (which `output_match` quotes in the
    report, JSON-escaped once more), and with `on_stderr` also a stderr line. The report quoted a
    value whose JSON text holds an escape (`"K01aXSEC\"tail"`: it remembered the value and its
    escaped form, not the text's escaped once more); a key written `to\u006ben` in a flag, or with
    the escape doubled in JSON held in a string, was not seen; the stderr log, read line by line,
    kept the lines after the first of a quoted value that runs past a line's end. And (hunt 109)
    a key in colours, a YAML block or triple-quoted value, `cfg["token"] = v`, `user[token]=v`,
    `token => 'v'`, `<token>v</token>`, a key `\ttoken` in JSON held in a string, and a value after
    a mark left `token: [redacted] v` whole; (hunts 110 and 111) YAML blocks in a list or with a
    tag, string prefixes, Markdown keys and rows, pairs, columns, keys touching other scripts."""
    write("c.json", {"version": 2, "name": "r", "rules": [{"id": "out", "kind": "output_match",
                                                           "match": {"raw": "nope"}}]})
    write("f.json", {"version": 1, "tools": {}})
    leaked = []   # (hunt 108 and 109: escapes, lines; 110: blocks, prefixes, Markdown, pairs)
    for text in ESCAPED_FORMS:
        steps = [*START, send("agent.message", text=text), *([{"stderr": text + "\n"}] if on_stderr else []),
                 send("run.completed", status="done", output={"raw": text})]
        write("s.json", steps)
        for name in ("t.jsonl", "t.jsonl.stderr.log"):
            (tmp_path / name).unlink(missing_ok=True)
        result = cli("record", "-c", "c.json", "--fixtures", "f.json", "--out", "t.jsonl", "--force", "--redact",
                     "token", "-f", "json", "--env", MARK, "--", sys.executable, str(AGENT), "s.json", "r.jsonl")
        assert result.returncode == 1, result.stderr
        written = (tmp_path / "t.jsonl").read_text(encoding="utf-8") + result.stdout + result.stderr
        if on_stderr:
            written += (tmp_path / "t.jsonl.stderr.log").read_text(encoding="utf-8")
        if "XSEC" in written:
            leaked.append(text)
    assert leaked == [], "\n".join(leaked)


DAMAGE_FREE = [   # (hunt 110) text that names no key's value, and what the trace keeps of it
    ("Set GITHUB_TOKEN=abc123 in CI.\nAll green.", "Set GITHUB_TOKEN=abc123 in CI.\nAll green."),
    ("access_token=abc&page=2 and x-token: abc", "access_token=abc&page=2 and x-token: abc"),
    ("Here is how to get the token:\n\n1. Open Settings.", "Here is how to get the token:\n\n1. Open Settings."),
    ("if (token == null) { arr.map(token => token.trim()) }", "if (token == null) { arr.map(token => token.trim()) }"),
    ("running pyt3st on tests/t3st_api.py, limit 1230", "running pyt3st on tests/t3st_api.py, limit 1230"),
    ("run t3st now", "run [redacted] now"),   # the value `t3st` itself, as a word
    ("x = None  # changeme", "x = None  # changeme"),   # plain words are not looked for
    ("let t = Token::new(); if (token == x)", "let t = Token::new(); if (token == x)"),
    ("token := &oauth2.Token{}; ?token=&state=xyz", "token := &oauth2.Token{}; ?token=&state=xyz"),   # (empty)
    ("- token:\n- user:", "- token:\n- user:"),   # (a list item's key: the next item is no value)
    ("token: test", "token: [redacted]"),
]


def test_redaction_leaves_text_that_holds_no_value_as_it_is(cli, write, tmp_path: Path) -> None:
    """`GITHUB_TOKEN=v` and `access_token=v` name other keys than `token`, yet replaced the whole
    text; so did a line ending in `token:`; `token == x` and `token => f(token)` lost what followed;
    and a value once removed (`token=test`, `token=123`) was replaced inside every later word
    (`pytest`, `1230`) (hunt 110). A value is replaced where it is a whole word, and a plain word
    (`None`, `changeme`) not beyond its key (hunt 111)."""
    write("c.json", {"version": 1, "name": "c", "rules": [{"id": "no-shell", "kind": "deny_tool", "tool": "shell"}]})
    write("f.json", {"version": 1, "tools": {}})
    texts = ["token=t3st and token=123 and token=None, token=changeme", *[text for text, _ in DAMAGE_FREE]]
    write("s.json", [*START, *[send("agent.message", text=text) for text in texts], *DONE])
    result = cli("record", "-c", "c.json", "--fixtures", "f.json", "--out", "t.jsonl", "--redact", "token", "--env",
                 MARK, "--", sys.executable, str(AGENT), "s.json", "r.jsonl")
    assert result.returncode == 0, result.stderr
    messages = [json.loads(line)["data"]["text"] for line in (tmp_path / "t.jsonl").read_text(
        encoding="utf-8").splitlines() if '"agent.message"' in line]
    assert messages == ["token=[redacted] and token=[redacted] and token=[redacted], token=[redacted]",
                        *[kept for _, kept in DAMAGE_FREE]]


def test_values_removed_before_hide_no_key_and_rename_no_member(cli, write, tmp_path: Path) -> None:
    """A value that is a part of a key's name (`password` for `db-password`), removed once, was
    replaced first in later text and hid the key: the next value of `db-password=` was written
    whole. The member names and words of an object under a key were remembered, and later
    objects lost members (`{"kind": "service", "type": "x"}` became `{"[redacted]": "x"}`). A value
    after a terminal colour written `\\033[35m` was kept (hunt 111). Its numbers went from later
    text too (`3600`, hunt 112)."""
    write("c.json", {"version": 2, "name": "r", "rules": [{"id": "out", "kind": "output_match",
                                                           "match": {"raw": "nope"}}]})
    write("f.json", {"version": 1, "tools": {"x": {"result": {"ok": True}}}})
    later = {"kind": "service", "type": "bearer", "level": 3, "ttl": 3600}
    args = {"db-password": "password", "token": {"type": "bearer", "scope": "read", "expires_in": 3600}}
    write("s.json", [*START, *call("c1", "x", args),
                     send("agent.message", text="db-password=K62aXSEC and token=K63aXSEC"),
                     send("agent.message", text="colour \\033[35mK63aXSEC\\033[0m"),
                     send("agent.message", text=json.dumps(later)),
                     send("run.completed", status="done", output={"raw": "db-password: K64aXSEC"})])
    result = cli("record", "-c", "c.json", "--fixtures", "f.json", "--out", "t.jsonl", "--redact", "db-password",
                 "--redact", "token", "-f", "json", "--env", MARK, "--", sys.executable, str(AGENT), "s.json",
                 "r.jsonl")
    assert result.returncode == 1, result.stderr
    trace = (tmp_path / "t.jsonl").read_text(encoding="utf-8")
    assert "XSEC" not in trace + result.stdout + result.stderr
    messages = [json.loads(line)["data"]["text"] for line in trace.splitlines() if '"agent.message"' in line]
    assert messages == ["db-password=[redacted] and token=[redacted]", "colour \\033[35m[redacted]\\033[0m",
                        json.dumps(later)]


def test_a_cut_value_an_argument_value_and_values_other_encoders_escape_are_kept_out(
        cli, write, tmp_path: Path) -> None:
    """A report message that cuts a value five characters after its key showed them (`token=K80aX…`,
    hunt 109 L2); `--token=A&B` as one argument of the command kept `&B` (hunt 110 M4); a value
    echoed as PHP (`\\/`) or Go (`\\u003c`) escape it was kept (hunt 110 M2); and a terminal's title
    escape without its end (`\\x1b]`) took the rest of the stderr log with it."""
    write("c.json", {"version": 2, "name": "r", "rules": [{"id": "out", "kind": "output_match",
                                                           "match": {"raw": "nope"}}]})
    write("f.json", {"version": 1, "tools": {"x": {"result": {"ok": True}}}})
    cut_text = "x" * 66 + " token=K80aXSEC" + "q" * 40
    write("cut.json", [*START, send("run.completed", status="done", output={"raw": cut_text})])
    cut = cli("record", "-c", "c.json", "--fixtures", "f.json", "--out", "t1.jsonl", "--redact", "token", "-f", "text",
              "--color", "never", "--env", MARK, "--", sys.executable, str(AGENT), "cut.json", "r.jsonl")
    assert cut.returncode == 1, cut.stderr
    assert "K80aX" not in cut.stdout and "token=[redacted]" in cut.stdout, cut.stdout
    echoed = "sent K82aXSEC\\u003cb\\u003e\\u0026c and K84aXSEC\\/path"   # (as Go, then PHP, escape them)
    write("s.json", [*START, *call("c1", "x", {"token": "K82aXSEC<b>&c"}), *call("c2", "x", {"token": "K84aXSEC/path"}),
                     send("agent.message", text="echo K81aXSEC&K81bXSEC"),
                     {"stderr": "\x1b]" * 3 + "token=K83aXSEC\nkept\n"},
                     send("run.completed", status="done", output={"raw": echoed})])
    result = cli("record", "-c", "c.json", "--fixtures", "f.json", "--out", "t.jsonl", "--redact", "token", "-f",
                 "json", "--env", MARK, "--", sys.executable, str(AGENT), "s.json", "r.jsonl",
                 "--token=K81aXSEC&K81bXSEC")
    assert result.returncode == 1, result.stderr
    log = (tmp_path / "t.jsonl.stderr.log").read_text(encoding="utf-8")
    assert "XSEC" not in (tmp_path / "t.jsonl").read_text(encoding="utf-8") + log + result.stdout + result.stderr
    assert json.loads(result.stdout)["record"]["command"][-1] == "--token=[redacted]"
    assert log.endswith("kept\n"), log


def test_secrets_record_hands_out_itself_are_kept_out_when_echoed(cli, write, tmp_path: Path) -> None:
    """A value of a key in the agent's command line (`--token X`), its environment (`TOKEN=X`)
    or an `--mcp` server's command line was redacted where `record` itself shows the command,
    but not when the agent, or the server failing to start, said it again (hunt 109); nor, a
    value with a space, when the agent printed it as `TOKEN=a b` (hunt 110)."""
    write("c.json", {"version": 2, "name": "r", "rules": [{"id": "out", "kind": "output_match",
                                                           "match": {"raw": "nope"}}]})
    write("f.json", {"version": 1, "tools": {}})
    said = "argv K50aXSEC env TOKEN=K51aXSEC K51bXSEC"   # (a value with a space, as `env` prints it)
    write("s.json", [*START, send("agent.message", text=said), {"stderr": said + "\n"},
                     send("run.completed", status="done", output={"raw": said})])
    result = cli("record", "-c", "c.json", "--fixtures", "f.json", "--out", "t.jsonl", "--redact", "token", "-f",
                 "json", "--env", "TOKEN=K51aXSEC K51bXSEC", "--env", MARK, "--", sys.executable, str(AGENT), "s.json",
                 "r.jsonl", "--token", "K50aXSEC")
    assert result.returncode == 1, result.stderr
    written = (tmp_path / "t.jsonl").read_text(encoding="utf-8") + \
        (tmp_path / "t.jsonl.stderr.log").read_text(encoding="utf-8") + result.stdout + result.stderr
    assert "XSEC" not in written
    assert json.loads(result.stdout)["violations"][0]["message"] == \
        'The final output does not match: /output/raw expected "nope", got "argv [redacted] env TOKEN=[redacted]".'
    write("fail.py", "import sys\nsys.stderr.write('bad token ' + sys.argv[-1] + '\\n')\nsys.exit(3)\n")
    refused = cli("record", "-c", "c.json", "--fixtures", "f.json", "--out", "t2.jsonl", "--redact", "token",
                  "--mcp", f"{sys.executable} fail.py --token K52aXSEC", "--", sys.executable, str(AGENT), "s.json",
                  "r.jsonl")
    assert refused.returncode == 2
    assert "XSEC" not in refused.stderr and "bad token [redacted]" in refused.stderr, refused.stderr


def test_a_token_a_server_repeats_in_its_tools_is_kept_out_of_the_snapshot_too(cli, write, tmp_path: Path) -> None:
    """An `--mcp` server's token that the server repeats in a tool's description was removed from
    the trace's listing, not from the `--write-tool-snapshot` file, which is meant to be committed
    (hunt 110); and a snapshot so written shows no drift when the token changes."""
    write("c.json", {"version": 1, "name": "c", "rules": [{"id": "no-shell", "kind": "deny_tool", "tool": "shell"}]})
    write("f.json", {"version": 1, "tools": {}})
    write("s.json", [*START, *DONE])
    command = ["record", "-c", "c.json", "--fixtures", "f.json", "--redact", "token", "--force", "--out", "t.jsonl",
               "-f", "json", "--env", MARK]
    agent = ["--", sys.executable, str(AGENT), "s.json", "r.jsonl"]
    written = cli(*command, "--mcp", f"{sys.executable} {SERVER} --token K55aXSEC", "--write-tool-snapshot",
                  "tools.json", *agent)
    assert written.returncode == 0, written.stderr
    snapshot = json.loads((tmp_path / "tools.json").read_text(encoding="utf-8"))
    assert snapshot["tools"]["greet"]["description"] == "Greets; authenticated with [redacted]."
    assert "XSEC" not in (tmp_path / "t.jsonl").read_text(encoding="utf-8") + written.stdout
    rotated = cli(*command, "--mcp", f"{sys.executable} {SERVER} --token K56aXSEC", "--tool-snapshot", "tools.json",
                  *agent)
    assert (rotated.returncode, json.loads(rotated.stdout)["record"]["findings"]) == (0, [])


def test_values_under_keys_spelt_another_way_and_echoed_escaped_are_redacted(cli, write, tmp_path: Path) -> None:
    """A key in compatibility forms (`ｔｏｋｅｎ`), with a zero-width character, or equal under case
    folding (`ſecret`) held its value; a value other than ASCII echoed as an encoder that escapes it
    writes it (`\\u00e4`) was shown by the trace and the report (hunt 109)."""
    write("c.json", {"version": 2, "name": "r", "rules": [{"id": "out", "kind": "output_match",
                                                           "match": {"raw": "nope"}}]})
    write("f.json", {"version": 1, "tools": {"x": {"result": {"ok": True}}}})
    args = {"ｔｏｋｅｎ": "K60aXSEC", "to\u200bken": "K61aXSEC", "ſecret": "K62aXSEC", "token": "K63aXSECpässwörd"}
    write("s.json", [*START, *call("c1", "x", args),
                     send("run.completed", status="done", output={"raw": json.dumps({"sent": "K63aXSECpässwörd"})})])
    result = cli("record", "-c", "c.json", "--fixtures", "f.json", "--out", "t.jsonl", "--redact", "token", "--redact",
                 "SECRET", "-f", "json", "--env", MARK, "--", sys.executable, str(AGENT), "s.json", "r.jsonl")
    assert result.returncode == 1, result.stderr
    trace = (tmp_path / "t.jsonl").read_text(encoding="utf-8")
    assert "XSEC" not in trace + result.stdout + result.stderr
    assert json.loads(trace.splitlines()[1])["args"] == {key: "[redacted]" for key in args}


def _redacted_in_time(cli, write, tmp_path: Path, texts: list[str], seconds: float) -> str:
    """The trace `record --redact token` writes of an agent saying `texts`, within `seconds`."""
    write("c.json", {"version": 1, "name": "c", "rules": [{"id": "no-shell", "kind": "deny_tool", "tool": "shell"}]})
    write("f.json", {"version": 1, "tools": {}})
    write("s.json", [*START, *[send("agent.message", text=text) for text in texts], *DONE])
    started = time.monotonic()
    result = cli("record", "-c", "c.json", "--fixtures", "f.json", "--out", "t.jsonl", "--redact", "token", "--env",
                 MARK, "--", sys.executable, str(AGENT), "s.json", "r.jsonl")
    assert result.returncode == 0, result.stderr
    assert time.monotonic() - started < seconds
    return (tmp_path / "t.jsonl").read_text(encoding="utf-8")


def test_many_distinct_secrets_are_redacted_in_linear_time(cli, write, tmp_path: Path) -> None:
    """Each secret remembered made the values looked for again from all of them: 16,000 messages
    of a value each took 53 s (hunt 109), against 0.3 s without --redact."""
    texts = [f"token=v{at:07d}" for at in range(16_000)]
    assert "v0015999" not in _redacted_in_time(cli, write, tmp_path, texts, 20)


def test_a_key_followed_by_a_long_run_of_spaces_is_redacted_in_linear_time(cli, write, tmp_path: Path) -> None:
    """`token` and then 200,000 spaces (or tabs) with no `:` or `=`: the text patterns tried every
    split of the run from every space of it, 16,000 spaces 10 s, a line of a MiB hours (hunt 108)."""
    texts = ['"token"' + " " * 200_000 + "x", "token" + "\t" * 200_000, "--token" + " " * 200_000 + "token=SEC-1"]
    assert "SEC-1" not in _redacted_in_time(cli, write, tmp_path, texts, 30)


def test_a_secret_shown_cut_in_a_report_is_found_after_another_replaced_inside_it(cli, write, tmp_path: Path) -> None:
    """The report shows the output cut to 200 characters (`output_match`'s `actual`). A value whose
    quote is left open on its line (`"token": "ZZS07aSECRET open quote never…`) was replaced whole
    in the trace, but in the report its shown start was found only as a start, and another removed
    value (`token:X "token": "`) had been replaced inside it first: the rest was written to the
    report (found by hunt 106). A quoted value now runs to its closing quote, past a line's end."""
    texts = ["token=ZZS01aSECRET rest", "token: ZZS02aSECRET and more", '"token": "ZZS03aSECRET", "x": 1',
             "--token ZZS04aSECRET --other", "--token=ZZS05aSECRET", '{"token": "ZZS06aSECRET"}',
             '"token": "ZZS07aSECRET open quote never closed', 'token:ZZS54aSECRET "token": "']
    write("c.json", {"version": 2, "name": "r", "rules": [{"id": "out", "kind": "output_match",
                                                           "match": {"raw": "nope"}}]})
    write("f.json", {"version": 1, "tools": {}})
    steps = [*START, *[send("agent.message", text=text) for text in texts],
             send("run.completed", status="done", output={"raw": "\n".join(texts)})]
    write("s.json", steps)
    result = cli("record", "-c", "c.json", "--fixtures", "f.json", "--out", "t.jsonl", "--redact", "token", "-f",
                 "json", "--env", MARK, "--", sys.executable, str(AGENT), "s.json", "r.jsonl")
    assert result.returncode == 1, result.stderr
    actual = json.loads(result.stdout)["violations"][0]["evidence"]["mismatches"][0]["actual"]
    assert "ZZS" not in actual and actual.endswith("\n[redacted]"), actual
    assert "ZZS" not in result.stdout + (tmp_path / "t.jsonl").read_text(encoding="utf-8")


def test_a_denial_quoting_a_redacted_value_is_redacted_too(cli, write, tmp_path: Path) -> None:
    """Found by the fourth hunt: under --enforce, the tool.denied written for a call quoted the
    rule's message, `got "sk-SECRET-123"`, into the trace and the HTML report. Every value
    removed so far is now replaced wherever a later event quotes it, under any key."""
    write("c.json", {"version": 2, "name": "secrets", "rules": [
        {"id": "key-shape", "kind": "tool_args", "tool": "api.call", "match": {"api_key": {"$regex": "^pk-"}}}]})
    write("f.json", {"version": 1, "tools": {"api.call": {"ok": True}}})
    write("s.json", [*START, *call("c1", "api.call", {"api_key": "sk-SECRET-123"}),
                     send("agent.message", text="the key was sk-SECRET-123", data={"echo": "sk-SECRET-123"}), *DONE])
    result = cli("record", "-c", "c.json", "--fixtures", "f.json", "--out", "t.jsonl", "--fake-clock", "--enforce",
                 "--redact", "api_key", "-f", "html", "-o", "report.html", "--", sys.executable, str(AGENT), "s.json",
                 "r.jsonl")
    assert result.returncode == 1, result.stderr
    trace = (tmp_path / "t.jsonl").read_text(encoding="utf-8")
    assert "sk-SECRET-123" not in trace
    assert "sk-SECRET-123" not in (tmp_path / "report.html").read_text(encoding="utf-8")
    events = [json.loads(line) for line in trace.splitlines()]
    assert [event["type"] for event in events] == ["run.start", "tool.call", "tool.denied", "agent.message",
                                                   "run.completed"]
    assert events[2]["reason"] == ('key-shape: Args of api.call at seq 2 do not match: /args/api_key expected '
                                   '{"$regex":"^pk-"}, got "[redacted]".')
    assert events[3]["data"] == {"text": "the key was [redacted]", "echo": "[redacted]"}


def test_many_distinct_secrets_are_each_kept_out_of_later_events(tmp_path: Path) -> None:
    """With more remembered values than are searched for one by one, a string is first looked
    through by length: each of 40 keys, echoed by the agent inside a later message, still goes."""
    keys = [f"key-{number:04d}-secret" for number in range(40)]
    steps = [*START]
    for number, key in enumerate(keys):
        steps += [*call(f"c{number}", "api.call", {"api_key": key})]
    steps += [send("agent.message", text="used " + ", ".join(keys)), *DONE]
    run = run_agent(tmp_path, steps, V2, {"version": 1, "tools": {"api.call": {"ok": True}}}, redact=["api_key"])
    trace = run.trace.read_text(encoding="utf-8")
    assert not any(key in trace for key in keys)
    message = next(event for event in run.events if event["type"] == "agent.message")
    assert message["data"]["text"] == "used " + ", ".join(["[redacted]"] * 40)


@pytest.mark.parametrize(("said", "written"), [
    ("retry with token=[redacted] then", "retry with token=[redacted] then"),   # the mark is already a value
    ("token=se]cret rest", "token=[redacted] rest"),   # a bracket inside the value is the value's
    ("token=a,b rest", "token=[redacted] rest"),
    ("token=abc]]def, x", "token=[redacted], x"),
    ("{token=abc}", "{token=[redacted]}"),   # the object's brace closes it
    ("(token=abc), next", "(token=[redacted]), next"),
    ("run --token [q] now", "run --token [redacted] now"),   # a bracket the value opened is its own
    ("?token=abc&user=bob", "?token=[redacted]&user=bob"),
    ("token: abc and more", "token: [redacted]"),   # `key: value` is the rest of the line
])
def test_a_value_in_text_goes_whole_and_marks_stay_whole(tmp_path: Path, said: str, written: str) -> None:
    """`key=value` in text: the value goes up to a space, a quote, `&`, `;` or a closing
    character that ends it, never leaving its tail in the file; a mark already there stays as it
    is (a replayed redacted baseline says `token=[redacted]`), as does every later mark when a
    remembered value is inside the mark's own letters (`red`); and the plain words of a `key:
    value` line are not taken for secrets: `and` stays in later text."""
    steps = [*START, *call("c1", "api.call", {"pin": "red", "token": "x[redacted]y"}), send("agent.message", text=said),
             send("agent.message", text="and more [redacted] words, x[redacted]y"), *DONE]
    run = run_agent(tmp_path, steps, V2, {"version": 1, "tools": {"api.call": {"ok": True}}}, redact=["token", "pin"])
    texts = [event["data"]["text"] for event in run.events if event["type"] == "agent.message"]
    assert texts == [written, "and more [redacted] words, [redacted]"]   # a value taking in a mark goes whole


JWT = ("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIy"
       "fQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yQsw5c")


def test_no_part_of_a_secret_reaches_a_report_a_message_cuts_or_escapes(cli, write) -> None:
    """A message shows a long value cut (`got "eyJhbGciOi…"`) and control or invisible characters
    escaped (`\\u2028`): neither spelling is the value, and both reached every format; nor did the
    agent's command line (`--token <value>`), which the report holds."""
    write("c.json", {"version": 2, "name": "secrets", "rules": [
        {"id": "pinned", "kind": "tool_args", "tool": "api.call", "match": {"token": "sk-OTHER"}},
        {"id": "plain", "kind": "tool_args", "tool": "api.sep", "match": {"token": "sk-OTHER"}}]})
    write("f.json", {"version": 1, "tools": {"api.call": {"ok": True}, "api.sep": {"ok": True}}})
    write("s.json", [*START, *call("c1", "api.call", {"token": JWT}),
                     *call("c2", "api.sep", {"token": "ab\u2028cd-LS"}), *DONE])
    for fmt in ("json", "text", "markdown", "junit", "sarif", "github", "html"):
        result = cli("record", "-c", "c.json", "--fixtures", "f.json", "--out", "t.jsonl", "--force", "--fake-clock",
                     "--redact", "token", "-f", fmt, "--env", MARK, "--", sys.executable, str(AGENT), "s.json",
                     "r.jsonl", "--token", JWT)
        assert result.returncode == 1, result.stderr
        for shown in (JWT[:20], "cd-LS", "u2028cd"):
            assert shown not in result.stdout and shown not in result.stderr, (fmt, shown)
        if fmt == "json":
            report = json.loads(result.stdout)
            assert report["record"]["command"][-2:] == ["--token", "[redacted]"]
            assert [violation["message"] for violation in report["violations"]] == [
                'Args of api.call at seq 2 do not match: /args/token expected "sk-OTHER", got "[redacted].',
                'Args of api.sep at seq 4 do not match: /args/token expected "sk-OTHER", got "[redacted]".']


def test_the_stderr_log_counts_every_byte_it_drops_when_redacting(tmp_path: Path) -> None:
    """The log keeps the last MiB; redacting, it also drops the cut first line (a `key=value` cut
    in two), and its first line counts those bytes too: what it says was dropped, plus what it
    holds, is what the agent wrote."""
    steps = [*START, {"stderr": ("x" * 1000 + "\n") * 1500}, *DONE]
    for name, redact in (("plain", []), ("secret", ["api_key"])):
        run = run_agent(tmp_path, steps, V2, FIXTURES, name=name, redact=redact)
        first, rest = Path(f"{run.trace}.stderr.log").read_bytes().split(b"\n", 1)
        dropped = int(first.decode().removeprefix("[… ").removesuffix(" bytes dropped]").replace(",", ""))
        assert (run.info.stderr_bytes, dropped + len(rest)) == (1_501_500, 1_501_500), name
        assert rest.startswith(b"x") and rest.endswith(b"x\n"), name
    assert len(rest) == 1_048_576 - 1_048_576 % 1001   # whole lines only


LINE_GROWS = {"version": 2, "name": "kept", "rules": [
    {"id": "w", "kind": "tool_args", "tool": "kv.get", "match": {"w": 2}},
    {"id": "out", "kind": "output_match", "match": {"w": 2}}]}
"""Rules on the values that are no secret, beside values that marking makes too long for a line."""


@pytest.mark.parametrize(("payload", "written", "how"), [
    ({"v": [{"k": 1}] * 60_000}, {"v": [{}] * 60_000}, 'its redacted keys are left out, not marked "[redacted]"'),
    ({"note": "k=1 " * 100_000}, {"note": "[redacted]"},
     'its redacted keys are left out, and each value that held a secret is replaced whole by "[redacted]"'),
    ({"v": ["k=1"] * 100_000, "n": [1, "x", "k=2"]}, {"v": [], "n": [1, "x"]},
     "its redacted keys are left out, and so is each value that held a secret"),
], ids=["members", "strings", "elements"])
def test_a_line_that_marking_makes_too_long_keeps_its_other_values_and_says_so(
        cli, write, payload: dict[str, Any], written: dict[str, Any], how: str) -> None:
    """`"[redacted]"` is longer than many values: when marking them would make an event's line
    longer than a trace line may be (1 MiB), less is written, in steps, and record warns naming
    the line. What is not a secret stays, so `check` of the trace gives record's verdict."""
    write("c.json", LINE_GROWS)
    write("f.json", {"version": 1, "tools": {"kv.get": {"v": 1}}})
    write("s.json", [*START, *call("c1", "kv.get", {**payload, "w": 2}),
                     send("run.completed", output={**payload, "w": 2})])
    result = cli("record", "-c", "c.json", "--fixtures", "f.json", "--out", "t.jsonl", "--fake-clock", "--redact", "K",
                 "-f", "json", "--env", MARK, "--", sys.executable, str(AGENT), "s.json", "r.jsonl")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["passed"] is True
    events = [json.loads(line) for line in Path(cli.cwd, "t.jsonl").read_text(encoding="utf-8").splitlines()]
    assert events[1]["args"] == events[3]["output"] == {**written, "w": 2}
    assert result.stderr.splitlines() == [
        f"agent-invariants: warning: t.jsonl line {line} ({kind}): {how}: marked, the line would be longer than "
        "1,048,576 bytes" for line, kind in [(2, "tool.call"), (4, "run.completed")]]
    checked = cli("check", "-c", "c.json", "-t", "t.jsonl")
    assert checked.returncode == 0, checked.stdout


def test_values_nested_hundreds_of_levels_deep_are_redacted(cli, write) -> None:
    """Args nested 400 levels deep (a trace may hold 500), a message whose text is JSON as deep,
    and a stderr line of it: redaction walks a value some five frames a level, and ended `record`
    with a RecursionError past about 250 levels. Each secret is gone, and `check` of the trace
    agrees with record's verdict."""
    args: Any = {"k": "SEC-ARGS"}
    text: Any = {"k": "SEC-TEXT"}
    for _ in range(400):
        args, text = [args], [text]
    write("c.json", LINE_GROWS)
    write("f.json", {"version": 1, "tools": {"kv.get": {"v": 1}}})
    write("s.json", [*START, *call("c1", "kv.get", {"a": args, "w": 2}),
                     send("agent.message", text=json.dumps(text)), {"stderr": json.dumps(text) + "\n"},
                     send("run.completed", output={"w": 2})])
    result = cli("record", "-c", "c.json", "--fixtures", "f.json", "--out", "t.jsonl", "--fake-clock", "--redact", "k",
                 "-f", "json", "--env", MARK, "--", sys.executable, str(AGENT), "s.json", "r.jsonl")
    assert result.returncode == 0, result.stderr[-2000:]
    assert json.loads(result.stdout)["passed"] is True
    written = Path(cli.cwd, "t.jsonl").read_text(encoding="utf-8")
    logged = Path(cli.cwd, "t.jsonl.stderr.log").read_text(encoding="utf-8")
    assert "SEC-" not in written + logged + result.stdout + result.stderr
    assert written.count("[[[[") and logged.count("[[[[")   # (the rest of each is kept)
    assert cli("check", "-c", "c.json", "-t", "t.jsonl").returncode == 0


def test_every_run_of_a_repeat_warns_of_its_own_shortened_lines(cli, write, tmp_path: Path) -> None:
    write("c.json", LINE_GROWS)
    write("f.json", {"version": 1, "tools": {"kv.get": {"v": 1}}})
    write("s.json", [*START, *call("c1", "kv.get", {"v": [{"k": 1}] * 60_000, "w": 2}),
                     send("run.completed", output={"w": 2})])
    result = cli("record", "-c", "c.json", "--fixtures", "f.json", "--repeat", "2", "--out-dir", "runs", "--fake-clock",
                 "--redact", "k", "-f", "json", "--env", MARK, "--", sys.executable, str(AGENT), "s.json", "r.jsonl")
    assert result.returncode == 0, result.stderr
    assert [line.split(" (")[0] for line in result.stderr.splitlines()] == [
        f"agent-invariants: warning: {Path('runs', name)} line 2" for name in ("run-1.jsonl", "run-2.jsonl")]


def test_redacting_a_field_name_is_refused(cli, write) -> None:
    write("c.json", V2)
    write("f.json", FIXTURES)
    result = cli("record", "-c", "c.json", "--fixtures", "f.json", "--redact", "Tool", "--", "true")
    assert result.returncode == 2 and "--redact tool: names a field of events, reports or the harness" in result.stderr


def test_a_field_name_in_the_fixtures_redact_list_is_refused_where_it_is_written(cli, write) -> None:
    write("c.json", V2)
    write("f.json", {**FIXTURES, "redact": ["api_key", " Result "]})
    result = cli("record", "-c", "c.json", "--fixtures", "f.json", "--out", "t.jsonl", "--", "true")
    assert (result.returncode, result.stderr) == (2, 'agent-invariants: f.json: $.redact[1]: " Result " names a field '
                                                     "of events, reports or the harness's data; redacting it would "
                                                     "hide what the report is about\n")
    assert not Path(cli.cwd, "t.jsonl").exists()


# --- a real MCP server as the backend (point 85) -------------------------------------------------

SERVER = Path(__file__).parent / "data" / "record" / "mcp_server.py"


def test_a_server_result_too_large_to_record_and_a_drift_are_findings_every_format_shows(cli, write) -> None:
    """A server's result over a trace line's cap reached the agent as `ok: false` and the run
    passed, exit 0, as if the scenario had been tested; it is a `record.result_too_large`
    finding (exit 2). SARIF knew no rule for it, nor for `record.schema_drift` (a KeyError)."""
    write("c.json", {"version": 1, "name": "c", "rules": [{"id": "no-shell", "kind": "deny_tool", "tool": "shell"}]})
    write("f.json", {"version": 1, "tools": {}})
    write("s.json", [*START, *call("c1", "huge", {"megabytes": 1.5}), *DONE])
    server = f"{sys.executable} {SERVER}"
    write("tools.json", {"version": 1, "tools": {}})   # a snapshot of no tools: every tool drifted
    command = ["record", "-c", "c.json", "--fixtures", "f.json", "--mcp", f"{server} --huge", "--tool-snapshot",
              "tools.json", "--force", "--out", "t.jsonl", "--env", MARK]
    agent = ["--", sys.executable, str(AGENT), "s.json", "r.jsonl"]
    result = cli(*command, "-f", "json", *agent)
    assert result.returncode == 2, result.stderr
    findings = json.loads(result.stdout)["record"]["findings"]
    assert [(finding["code"], finding.get("call_id")) for finding in findings] == [
        ("record.schema_drift", None), ("record.result_too_large", "c1")]
    assert findings[1]["message"] == ("MCP server 0 answered call c1 of huge with 1,500,013 bytes of JSON, more than "
                                      "a trace line can carry (1,040,384); the agent got ok: false in its place.")
    recorded = record(Path(cli.cwd, "c.json"), [sys.executable, str(AGENT), "s.json", "r.jsonl"], RecordOptions(
        fixtures=str(Path(cli.cwd, "f.json")), mcp=[server + " --huge"], tool_snapshot=str(Path(cli.cwd, "tools.json")),
        force=True, out=str(Path(cli.cwd, "t.jsonl")), env=[MARK], cwd=str(cli.cwd)))
    for report_format in ("text", "sarif", "junit", "markdown", "html", "github"):   # (rendered in this process)
        shown = renderer(report_format).render(recorded.report, RenderOptions())
        assert "result_too_large" in shown and "schema_drift" in shown, report_format


def test_the_order_of_an_array_in_a_schemas_default_value_is_drift(cli, write) -> None:
    """Point 85: `required`, `enum`, `type` arrays are order-insensitive inside schemas; a default
    value holding a `type` key is data, not a schema, and its order counts."""
    write("c.json", {"version": 1, "name": "c", "rules": [{"id": "no-shell", "kind": "deny_tool", "tool": "shell"}]})
    write("f.json", {"version": 1, "tools": {}})
    write("s.json", [*START, *DONE])
    record = ["record", "-c", "c.json", "--fixtures", "f.json", "--mcp", f"{sys.executable} {SERVER} --defaults",
              "--force", "--out", "t.jsonl", "-f", "json", "--env", MARK]
    agent = ["--", sys.executable, str(AGENT), "s.json", "r.jsonl"]
    assert cli(*record, "--write-tool-snapshot", "tools.json", *agent).returncode == 0
    snapshot = json.loads(Path(cli.cwd, "tools.json").read_text(encoding="utf-8"))
    kind = snapshot["tools"]["shaped"]["inputSchema"]["properties"]["kind"]
    assert kind["default"] == {"type": ["first", "second"]}
    kind["default"]["type"].reverse()
    write("reordered.json", snapshot)
    drifted = cli(*record, "--tool-snapshot", "reordered.json", *agent)
    assert drifted.returncode == 2
    assert [finding["message"] for finding in json.loads(drifted.stdout)["record"]["findings"]] == [
        "The MCP servers' tools differ from the snapshot reordered.json: shaped."]


def test_a_server_error_of_code_32000_is_no_closed_connection(cli, write) -> None:
    """-32000 is JSON-RPC's first server error code, which servers send for their own errors;
    the SDK says "Connection closed" with it too. A server that answered one call so, and the
    next one fine, was reported on stderr as having closed its connection."""
    write("c.json", {"version": 1, "name": "c", "rules": [{"id": "no-shell", "kind": "deny_tool", "tool": "shell"}]})
    write("f.json", {"version": 1, "tools": {}})
    write("s.json", [*START, *call("c1", "refuse", {"times": 1}), *call("c2", "refuse", {"times": 2}), *DONE])
    result = cli("record", "-c", "c.json", "--fixtures", "f.json", "--mcp", f"{sys.executable} {SERVER} --rpc-error",
                 "--out", "t.jsonl", "-f", "json", "--env", MARK, "--", sys.executable, str(AGENT), "s.json", "r.jsonl")
    assert (result.returncode, result.stderr) == (0, "")
    events = [json.loads(line) for line in Path(cli.cwd, "t.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [(event["ok"], event["result"]) for event in events if event["type"] == "tool.result"] == [
        (False, {"error": "bad params"}), (True, {"result": "fine"})]


RAW_SERVER = r"""
import json, sys, time
UNREADABLE = '{"jsonrpc": "2.0", "id": %s, "result": {"name": "lone \\ud800 surrogate"}}'
out = sys.stdout.buffer
def say(line):
    out.write(line if isinstance(line, bytes) else line.encode() + b"\n")
    out.flush()
say("starting up")   # a stray line before any answer: skipped
for line in sys.stdin:
    message = json.loads(line)
    method, number = message.get("method"), message.get("id")
    if method == "initialize":
        if "--slow-start" in sys.argv:
            time.sleep(2)   # after the banner: the answer still counts
        result = {"protocolVersion": message["params"]["protocolVersion"], "capabilities": {"tools": {}},
                  "serverInfo": {"name": "raw", "version": "0"}}
    elif method == "tools/list":
        if "--bad-listing" in sys.argv:
            say(UNREADABLE % json.dumps(number))
            continue
        if "--escaped-listing" in sys.argv:   # keys written with escapes, as JSON allows
            say('{"jsonrp\\u0063": "2.0", "\\u0069d": %s, "r\\u0065sult": {"name": "lone \\ud800 surrogate"}}'
                % json.dumps(number))
            continue
        if "--secret-listing" in sys.argv:   # secrets in forms text redaction cannot be sure of
            say('{"jsonrpc": "2.0", "id": %s, "result": {"to\\u006ben": "sk-live-1", "api_key": "a\\"sk-live-2", '
                '"x": "\\ud800"}}' % json.dumps(number))
            continue
        result = {"tools": [{"name": name, "inputSchema": {"type": "object"}}
                            for name in ("good", "bad", "slow", "late", "dies")]}
    elif method == "tools/call":
        name = message["params"]["name"]
        if name == "bad":
            say(UNREADABLE % json.dumps(number))
            continue
        if name == "dies":   # answers unreadably and ends
            say(UNREADABLE % json.dumps(number))
            sys.exit(0)
        if name == "late":   # answered after the call's deadline, unreadably, while the next call waits
            time.sleep(3.5)
            say(UNREADABLE % json.dumps(number))
            continue
        say(b"\xff\xfe not UTF-8\n")   # a stray line, not even UTF-8: skipped
        if name == "slow":
            for _ in range(2000):
                say("log: still working")
            say('{"level": "info", "id": 7, "result": "working"}')   # a log line in JSON, no answer
            time.sleep(2)
        result = {"content": [{"type": "text", "text": "fine"}]}
    else:
        continue
    say(json.dumps({"jsonrpc": "2.0", "id": number, "result": result}))
"""
UNREADABLE_REASON = "Invalid JSON: unexpected end of hex escape at line 1 column 60"


FINE = [{"type": "text", "text": "fine"}]


def _raw_server(write) -> str:
    """The contract of these runs, and the command of RAW_SERVER (written beside it)."""
    import shlex
    write("c.json", {"version": 1, "name": "c", "rules": [{"id": "no-shell", "kind": "deny_tool", "tool": "shell"}]})
    write("raw.py", RAW_SERVER)
    return shlex.join([sys.executable, "raw.py"])


def _answers(cli, trace: str) -> list[tuple[bool, Any]]:
    events = [json.loads(line) for line in Path(cli.cwd, trace).read_text(encoding="utf-8").splitlines()]
    return [(event["ok"], event["result"]) for event in events if event["type"] == "tool.result"]


def test_an_answer_the_sdk_cannot_read_is_told_so_without_waiting_out_the_deadline(cli, write) -> None:
    """A server's answer that the SDK cannot read (here a lone surrogate) left the request waiting
    for the whole deadline, then told "no answer within 20000 ms": it is told as what it is, a
    second after it. Stray lines are skipped, as the SDK skips them, however many and however slow
    the answer after them (a banner, log lines, in JSON too), and bytes that are not UTF-8 no longer
    cut the server off: every later answer was lost."""
    server = _raw_server(write)
    write("s.json", [*START, *call("c1", "good", {}), *call("c2", "bad", {}), *call("c3", "slow", {}),
                     *call("c4", "good", {}), *DONE])
    started = time.monotonic()
    result = cli("record", "-c", "c.json", "--mcp", f"{server} --slow-start", "--mcp-call-timeout-ms", "20000",
                 "--out", "t.jsonl", "--env", MARK, "--", sys.executable, str(AGENT), "s.json", "r.jsonl")
    assert (result.returncode, result.stderr) == (0, "")
    assert time.monotonic() - started < 15   # (the old wait alone was 20 s)
    assert _answers(cli, "t.jsonl") == [
        (True, FINE),
        (False, {"error": "no answer: the server's answer could not be read "
                          f"({UNREADABLE_REASON})"}),
        (True, FINE), (True, FINE)]


def test_a_listing_the_sdk_cannot_read_is_told_so_at_start_up(cli, write) -> None:
    import shlex
    server = _raw_server(write)
    refused = cli("record", "-c", "c.json", "--mcp", f"{server} --bad-listing", "--mcp-start-timeout-ms", "20000",
                  "--out", "t.jsonl", "--", "true")
    assert refused.stderr == (f"agent-invariants: --mcp {shlex.quote(server + ' --bad-listing')}: no answer to "
                              "tools/list: the server's answer could not be read "
                              f"({UNREADABLE_REASON})\n")
    assert refused.returncode == 2
    assert not Path(cli.cwd, "t.jsonl").exists()


def test_an_unreadable_answer_whose_keys_are_written_with_escapes_is_told_so(cli, write) -> None:
    """`"\\u0069d"` is the key `id` in JSON: such an answer waited out the whole deadline, then was
    told as no answer at all."""
    import shlex
    server = _raw_server(write)
    started = time.monotonic()
    refused = cli("record", "-c", "c.json", "--mcp", f"{server} --escaped-listing", "--mcp-start-timeout-ms", "20000",
                  "--out", "t.jsonl", "--", "true")
    assert refused.stderr == (f"agent-invariants: --mcp {shlex.quote(server + ' --escaped-listing')}: no answer to "
                              "tools/list: the server's answer could not be read (Invalid JSON: unexpected end of hex "
                              "escape at line 1 column 75)\n")
    assert refused.returncode == 2
    assert time.monotonic() - started < 15


def test_the_error_of_an_unreadable_answer_never_quotes_it(cli, write) -> None:
    """The error of an answer the SDK cannot read says why in the parser's words and never quotes
    the line: it is the server's answer, and may hold a secret in forms text redaction cannot be
    sure of (a key written with an escape, a quote escaped in the value), which a quote of its
    start printed whole under --redact."""
    import shlex
    server = _raw_server(write)
    refused = cli("record", "-c", "c.json", "--mcp", f"{server} --secret-listing", "--redact", "api_key", "--redact",
                  "token", "--out", "t.jsonl", "--", "true")
    assert refused.stderr == (f"agent-invariants: --mcp {shlex.quote(server + ' --secret-listing')}: no answer to "
                              "tools/list: the server's answer could not be read (Invalid JSON: unexpected end of hex "
                              "escape at line 1 column 106)\n")
    assert refused.returncode == 2


def test_the_unreadable_late_answer_of_a_call_given_up_on_is_no_answer_to_the_next(cli, write) -> None:
    server = _raw_server(write)
    write("s.json", [*START, *call("c1", "late", {}), *call("c2", "slow", {}), *DONE])
    late = cli("record", "-c", "c.json", "--mcp", server, "--mcp-call-timeout-ms", "3000", "--out", "t.jsonl",
               "--env", MARK, "--", sys.executable, str(AGENT), "s.json", "r.jsonl")
    assert (late.returncode, late.stderr) == (0, "")
    assert _answers(cli, "t.jsonl") == [(False, {"error": "no answer within 3000 ms"}), (True, FINE)]


def test_an_unreadable_answer_before_the_server_ends_is_told_with_the_end(cli, write) -> None:
    server = _raw_server(write)
    write("s.json", [*START, *call("c1", "dies", {}), *DONE])
    dies = cli("record", "-c", "c.json", "--mcp", server, "--out", "t.jsonl", "--env", MARK, "--", sys.executable,
               str(AGENT), "s.json", "r.jsonl")
    assert _answers(cli, "t.jsonl") == [
        (False, {"error": "Connection closed; before that, the server's answer could not be read "
                          f"({UNREADABLE_REASON})"})]
    assert dies.returncode == 0, dies.stderr


def test_repeat_writes_the_tool_snapshot_once(cli, write) -> None:
    """`--repeat 2 --write-tool-snapshot`: the first run wrote the snapshot and the second refused
    it as "already exists", with no report. It is claimed once, before the first run; a snapshot
    naming one of the runs' traces is refused before any run."""
    write("c.json", {"version": 1, "name": "c", "rules": [{"id": "no-shell", "kind": "deny_tool", "tool": "shell"}]})
    write("f.json", {"version": 1, "tools": {}})
    write("s.json", [*START, *call("c1", "lookup", {"order": "A9"}),
                     send("run.completed", status="completed", output={"answer": 1})])
    record = ["record", "-c", "c.json", "--fixtures", "f.json", "--mcp", f"{sys.executable} {SERVER}", "--repeat",
              "2", "-f", "json", "--env", MARK]
    agent = ["--", sys.executable, str(AGENT), "s.json", "r.jsonl"]
    result = cli(*record, "--out-dir", "runs", "--write-tool-snapshot", "tools.json", *agent)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["traces"] == 2
    assert sorted(json.loads(Path(cli.cwd, "tools.json").read_text(encoding="utf-8"))["tools"]) == [
        "broken", "lookup", "slow"]
    clash = cli(*record, "--out-dir", "again", "--write-tool-snapshot", "again/run-2.jsonl", *agent)
    assert (clash.returncode, clash.stderr) == (2, "agent-invariants: --write-tool-snapshot again/run-2.jsonl is "
                                                   "a file of the run (again/run-2.jsonl); write the snapshot "
                                                   "elsewhere\n")
    assert not Path(cli.cwd, "again").exists()


def test_a_real_mcp_server_answers_the_tools_no_fixture_names(cli, write) -> None:
    write("c.json", {"version": 1, "name": "c", "rules": [{"id": "no-shell", "kind": "deny_tool", "tool": "shell"}]})
    write("f.json", {"version": 1, "tools": {"lookup": {"from": "fixture"}}})
    steps = [*START, *call("c1", "lookup", {"order": "A9"}), *call("c2", "broken", {}),
             *call("c3", "slow", {"seconds": 0.2}), *call("c4", "slow", {"seconds": 1.5}), *call("c5", "nowhere"),
             *DONE]
    write("s.json", steps)
    server = f"{sys.executable} {SERVER}"
    result = cli("record", "-c", "c.json", "--fixtures", "f.json", "--mcp", server, "--mcp-call-timeout-ms", "1000",
                 "--out", "t.jsonl", "-f", "json", "--write-tool-snapshot", "tools.json", "--env", MARK, "--",
                 sys.executable, str(AGENT), "s.json", "r.jsonl")
    assert result.returncode == 2, result.stderr   # the rules pass; "nowhere" is a fixture miss
    events = [json.loads(line) for line in Path(cli.cwd, "t.jsonl").read_text(encoding="utf-8").splitlines()]
    listing = events[1]
    assert listing["type"] == "tool.listing"
    assert sorted(tool["name"] for tool in listing["data"]["tools"]) == ["broken", "lookup", "slow"]
    results = {event["call_id"]: event for event in events if event["type"] == "tool.result"}
    assert results["c1"]["result"] == {"from": "fixture"}   # fixtures win for the tools they name
    assert results["c2"]["ok"] is False and results["c2"]["data"] == {"mcp": {"server": 0}}
    assert results["c3"]["ok"] is True and results["c3"]["duration_ms"] >= 200
    assert results["c4"]["ok"] is False and results["c4"]["result"] == {"error": "no answer within 1000 ms"}
    assert results["c5"]["data"] == {"fixture_miss": True}
    snapshot = json.loads(Path(cli.cwd, "tools.json").read_text(encoding="utf-8"))
    assert snapshot["version"] == 1 and sorted(snapshot["tools"]) == ["broken", "lookup", "slow"]
    # the same servers, one tool's schema changed: drift, named
    write("s2.json", [*START, *DONE])
    drifted = cli("record", "-c", "c.json", "--fixtures", "f.json", "--mcp", f"{server} --changed", "--out",
                  "t2.jsonl", "-f", "json", "--tool-snapshot", "tools.json", "--env", MARK, "--", sys.executable,
                  str(AGENT), "s2.json", "r2.jsonl")
    assert drifted.returncode == 2, drifted.stderr
    findings = json.loads(drifted.stdout)["record"]["findings"]
    assert [(f["code"], f["message"]) for f in findings] == [
        ("record.schema_drift", "The MCP servers' tools differ from the snapshot tools.json: lookup.")]


def test_an_mcp_answer_wakes_the_wait_and_its_time_is_when_it_came() -> None:
    """The wait for a server's answer also reads the agent, a moment at a time: an answer that
    came meanwhile was noticed only at the next look (50 ms later, on every call), and the look's
    time was the tool's `duration_ms` (a `latency_budget` of 20 ms failed every call). The answer
    now rings the wait awake, and its own time is the duration, whenever the harness looks."""
    import selectors

    from agent_invariants.record.mcp_backend import McpBackend

    backend = McpBackend([f"{sys.executable} {SERVER}"], start_timeout_ms=60_000, call_timeout_ms=60_000)
    try:
        def woken(answered: int) -> None:   # waits as long as it takes: only the answer ends it
            with selectors.DefaultSelector() as selector:
                selector.register(answered, selectors.EVENT_READ)
                assert selector.select(60), "the answer did not wake the wait"

        assert backend.call("slow", {"seconds": 0}, waiting=woken).ok is True

        looks: list[float] = []

        def late(answered: int) -> None:   # looks once a second, whatever came
            looks.append(time.monotonic())
            time.sleep(1.0)

        started = time.monotonic()   # (the answer takes a moment: one given at once may come before the first look)
        served = backend.call("slow", {"seconds": 0.2}, waiting=late)
        assert served.ok is True and looks and time.monotonic() - started >= 1.0
        assert served.duration_ms < 1000, served.duration_ms   # the answer's time, not the look's
    finally:
        backend.close()


def test_the_run_timer_ends_a_run_whose_mcp_call_is_pending(cli, write) -> None:
    """Spec point 78: the run timer runs from spawn until the agent exits; a server's answer does
    not stop it, as a fixture's delay does not. The pending call is cancelled: no result, and the
    run ends `timeout:run` (before, it waited out the call's own deadline, here ten minutes)."""
    write("c.json", {"version": 1, "name": "c", "rules": [{"id": "no-shell", "kind": "deny_tool", "tool": "shell"}]})
    write("s.json", [*START, *call("c1", "slow", {"seconds": 600}), *DONE])
    result = cli("record", "-c", "c.json", "--mcp", f"{sys.executable} {SERVER}", "--mcp-call-timeout-ms", "600000",
                 "--timeout-ms", "1500", "--out", "t.jsonl", "-f", "json", "--env", MARK, "--",
                 sys.executable, str(AGENT), "s.json", "r.jsonl", timeout=60)
    assert result.returncode == 2, result.stderr
    events = [json.loads(line) for line in Path(cli.cwd, "t.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [event["type"] for event in events] == ["run.start", "tool.listing", "tool.call", "run.failed"]
    assert events[-1]["reason"] == "timeout:run"


@pytest.mark.parametrize(("snapshot", "problem"), [
    ({"version": 1, "tools": {}, "note": "edited"}, "$.note: unknown key (a snapshot holds version and tools)"),
    ({"version": 1, "tools": {"lookup": {"name": "lookup", "inputSchem": {}}}},
     "$.tools.lookup.inputSchem: unknown key (a tool holds name, description, inputSchema, outputSchema, annotations)"),
    ({"version": 1, "tools": {"lookup": {"name": "search"}}}, "$.tools.lookup.name: must be the tool's name, lookup"),
    ({"version": 1, "tools": {"lookup": []}},
     "$.tools.lookup: must be an object (the tool's name, description, inputSchema, outputSchema, annotations)"),
    ({"version": 2, "tools": {}}, 'not a tool snapshot ({"version": 1, "tools": {...}}, as --write-tool-snapshot '
                                  "writes)"),
])
def test_a_tool_snapshot_that_was_not_written_so_is_refused_before_any_server_starts(
        cli, write, snapshot: dict, problem: str) -> None:
    """Found by the fourth hunt: an unknown key, or an entry named other than its key, was taken
    and only showed as drift of the tool (record.schema_drift) after the run."""
    write("c.json", V2)
    write("tools.json", snapshot)
    result = cli("record", "-c", "c.json", "--mcp", "no-such-mcp-server", "--tool-snapshot", "tools.json", "--out",
                 "t.jsonl", "--", "true")
    assert (result.returncode, result.stderr) == (2, f"agent-invariants: --tool-snapshot tools.json: {problem}\n")
    assert not Path(cli.cwd, "t.jsonl").exists()


def test_an_mcp_server_that_cannot_start_is_bad_input(cli, write) -> None:
    write("c.json", V2)
    result = cli("record", "-c", "c.json", "--mcp", "no-such-mcp-server --x", "--out", "t.jsonl", "--", "true")
    assert result.returncode == 2
    assert result.stderr.startswith("agent-invariants: --mcp 'no-such-mcp-server --x': cannot start")
    assert not Path(cli.cwd, "t.jsonl").exists()


def test_an_mcp_server_that_dies_at_start_up_is_explained_by_its_last_stderr_line(cli, write) -> None:
    """A server that ends before answering `initialize` (the usual cause: a Python without the
    SDK) is bad input whose line ends with what the server said last, escaped."""
    import shlex
    import sys
    write("c.json", V2)
    write("server.py", "import sys\nsys.stderr.write('starting\\n\\x1b[31mboom: no config\\n\\n')\nsys.exit(3)\n")
    command = shlex.join([sys.executable, "server.py"])
    result = cli("record", "-c", "c.json", "--mcp", command, "--out", "t.jsonl", "--", "true")
    assert result.returncode == 2
    assert result.stderr == (f"agent-invariants: --mcp {shlex.quote(command)}: initialize failed: Connection closed; "
                             "its stderr ended with: \\x1b[31mboom: no config\n")
    assert not Path(cli.cwd, "t.jsonl").exists()


def test_the_servers_start_side_by_side_and_serve_in_the_order_named(cli, write) -> None:
    """Each `--mcp` server has the whole start-up deadline: two that take 5 and 4.5 s to start both
    start within 9.4 s (one after the other, they took over 9.5 s; the 4.4 s to spare are for
    starting Python and the SDK on a busy machine, where 2.5 s once ran out). Their tools are listed, and a tool
    both list is served, in the order the servers are named, not the order they got ready in."""
    write("c.json", {"version": 1, "name": "c", "rules": [{"id": "no-shell", "kind": "deny_tool", "tool": "shell"}]})
    write("s.json", [*START, *call("c1", "lookup", {"order": "A9"}), *call("c2", "huge", {"megabytes": 0}), *DONE])
    first, second = (f"{sys.executable} {SERVER} --start-delay {delay}" for delay in (5, 4.5))
    result = cli("record", "-c", "c.json", "--mcp", first, "--mcp", f"{second} --huge", "--mcp-start-timeout-ms",
                 "9400", "--out", "t.jsonl", "-f", "json", "--env", MARK, "--", sys.executable, str(AGENT), "s.json",
                 "r.jsonl")
    assert result.returncode == 0, result.stderr
    events = [json.loads(line) for line in Path(cli.cwd, "t.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [(tool["name"], tool["server"]) for tool in events[1]["data"]["tools"]] == [
        ("lookup", 0), ("slow", 0), ("broken", 0), ("lookup", 1), ("huge", 1), ("slow", 1), ("broken", 1)]
    answers = [(event["call_id"], event["ok"], event["data"]) for event in events if event["type"] == "tool.result"]
    assert answers == [("c1", True, {"mcp": {"server": 0}}), ("c2", True, {"mcp": {"server": 1}})]


def test_of_several_servers_that_fail_to_start_the_first_named_is_told(cli, write, tmp_path: Path) -> None:
    """Servers that start side by side may fail in any order: the error is the first named one's,
    whichever failed first, told as soon as those named before it have started (not when a server
    named after it, which hangs, reaches the deadline), and nothing of any is left."""
    import shlex
    write("c.json", V2)
    write("late.py", "import sys, time\ntime.sleep(1.5)\nsys.stderr.write('late: no config\\n')\nsys.exit(3)\n")
    write("early.py", "import sys\nsys.stderr.write('early: no key\\n')\nsys.exit(3)\n")
    write("hangs.py", "import os, time\nopen('pid-' + str(os.getpid()), 'w').close()\ntime.sleep(60)\n")
    late, early, hangs = (shlex.join([sys.executable, name]) for name in ("late.py", "early.py", "hangs.py"))
    started = time.monotonic()
    result = cli("record", "-c", "c.json", "--mcp", f"{sys.executable} {SERVER}", "--mcp", late, "--mcp", early,
                 "--mcp", hangs, "--mcp-start-timeout-ms", "30000", "--out", "t.jsonl", "--", "true")
    assert result.stderr == (f"agent-invariants: --mcp {shlex.quote(late)}: initialize failed: Connection closed; "
                             "its stderr ended with: late: no config\n")
    assert result.returncode == 2
    assert time.monotonic() - started < 15   # (not the 30 s of the deadline)
    assert not Path(cli.cwd, "t.jsonl").exists()
    assert len(list(tmp_path.glob("pid-*"))) == 1
    assert _alive(tmp_path) == []


def test_a_server_that_does_not_start_in_time_is_ended_at_the_deadline(cli, write) -> None:
    """`--mcp-start-timeout-ms` is the user's deadline: a server that never answers `initialize`
    (and ignores SIGTERM) is ended then, not after the SDK's few seconds of grace for each way of
    asking it to stop; nothing of it is left."""
    import shlex
    write("c.json", V2)
    write("server.py", "import os, signal, sys, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
                       "open('pid', 'w').write(str(os.getpid()))\nsys.stderr.write('loading the model\\n')\n"
                       "sys.stderr.flush()\ntime.sleep(60)\n")
    command = shlex.join([sys.executable, "server.py"])
    started = time.monotonic()
    result = cli("record", "-c", "c.json", "--mcp", command, "--mcp-start-timeout-ms", "500", "--out", "t.jsonl",
                 "--", "true")
    took = time.monotonic() - started
    assert result.stderr == (f"agent-invariants: --mcp {shlex.quote(command)}: no answer to initialize before the "
                             "start-up deadline ran out (--mcp-start-timeout-ms); its stderr ended with: loading the "
                             "model\n")
    assert result.returncode == 2
    assert took < 4, took   # (the SDK's grace alone is 4 s: 2 after closing stdin, 2 after SIGTERM)
    pid = int(Path(cli.cwd, "pid").read_text())
    assert not Path(f"/proc/{pid}").exists() or "zombie" in Path(f"/proc/{pid}/status").read_text().lower()
    assert not Path(cli.cwd, "t.jsonl").exists()


def test_a_server_that_dies_during_the_run_is_said_on_stderr(cli, write) -> None:
    """Its later calls are answered ok: false ("Connection closed"), which rules may not notice:
    the run still says, once, that the server went away."""
    write("c.json", {"version": 1, "name": "c", "rules": [{"id": "no-shell", "kind": "deny_tool", "tool": "shell"}]})
    write("server.py", "import os\nfrom mcp.server.mcpserver import MCPServer\napp = MCPServer('dying')\n\n\n"
                       "@app.tool()\ndef crash() -> str:\n    os._exit(3)\n\n\n"
                       "@app.tool()\ndef echo(x: str) -> str:\n    return x\n\n\napp.run()\n")
    write("s.json", [*START, *call("c1", "crash", {}), *call("c2", "echo", {"x": "after"}), *DONE])
    result = cli("record", "-c", "c.json", "--mcp", f"{sys.executable} server.py", "--out", "t.jsonl",
                 "--env", MARK, "--", sys.executable, str(AGENT), "s.json", "r.jsonl")
    assert result.returncode == 0, result.stderr
    events = [json.loads(line) for line in Path(cli.cwd, "t.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [(e["call_id"], e["ok"], e["result"]) for e in events if e["type"] == "tool.result"] == [
        ("c1", False, {"error": "Connection closed"}), ("c2", False, {"error": "Connection closed"})]
    said = [line for line in result.stderr.splitlines() if "closed its connection" in line]
    assert said == [f"agent-invariants: warning: --mcp '{sys.executable} server.py': the server closed its "
                    "connection during the run; every call of its tools after that was answered ok: false "
                    "(Connection closed)"]


def test_the_last_stderr_line_of_a_server_that_dies_is_redacted(cli, write) -> None:
    """--redact keeps a secret out of everything record prints, the start-up failure's line too."""
    import shlex
    write("c.json", V2)
    write("server.py", "import sys\nsys.stderr.write('connecting with api_key=sk-12345 failed\\n')\nsys.exit(3)\n")
    command = shlex.join([sys.executable, "server.py"])
    result = cli("record", "-c", "c.json", "--mcp", command, "--redact", "api_key", "--out", "t.jsonl", "--", "true")
    assert result.returncode == 2
    assert result.stderr.endswith("its stderr ended with: connecting with api_key=[redacted] failed\n")
    assert "sk-12345" not in result.stderr


def test_the_readme_run_against_a_real_mcp_server_with_redaction(cli, tmp_path: Path) -> None:
    import shutil

    examples = Path(__file__).resolve().parent.parent / "examples"
    shutil.copytree(examples / "record", tmp_path / "record")
    result = cli("record", "--contract", "record/contract.json", "--fixtures", "record/fixtures-mcp.json", "--mcp",
                 f"{sys.executable} record/orders_server.py", "--enforce", "--fake-clock", "--out",
                 "runs/refund-mcp.jsonl", "--env", MARK, "--", sys.executable, "record/agent.py")
    readme = (examples.parent / "README.md").read_text(encoding="utf-8")
    assert result.returncode == 0, result.stderr
    assert result.stdout in readme
    line = (tmp_path / "runs" / "refund-mcp.jsonl").read_text(encoding="utf-8").splitlines()[3]
    assert line in readme and "tok_4242" not in (tmp_path / "runs" / "refund-mcp.jsonl").read_text(encoding="utf-8")
    # the server's own schemas are no values of the run: a property named like a redacted key
    # (card_token) leaves them whole, and none of their words is scrubbed from later events
    listing = json.loads((tmp_path / "runs" / "refund-mcp.jsonl").read_text(encoding="utf-8").splitlines()[1])
    (tool,) = listing["data"]["tools"]
    assert tool["inputSchema"]["properties"]["order"] == {"title": "Order", "type": "string"}
    assert tool["outputSchema"]["properties"]["card_token"] == {"title": "Card Token", "type": "string"}


# --- Agent Doctor adapters (point 89) ------------------------------------------------------------

ADAPTER = """import json, sys
def send(message): print(json.dumps(message), flush=True)
start = json.loads(sys.stdin.readline())
assert start["type"] == "run_start", start
order = start["input"]["order"]
send({"type": "tool_call", "callId": "1", "name": "orders.get", "arguments": {"order": order}})
found = json.loads(sys.stdin.readline())
send({"type": "confirmation", "name": "payments.refund", "arguments": {"order": order}})
send({"type": "tool_call", "callId": "2", "name": "payments.refund", "arguments": {"order": order, "amount": 10}})
refund = json.loads(sys.stdin.readline())
send({"type": "tool_call", "callId": "3", "name": "shell.exec", "arguments": {"cmd": "rm"}})
denied = json.loads(sys.stdin.readline())
send({"type": "final", "status": "completed", "output": {"found": found, "refund": refund, "denied": denied}})
"""


def test_an_agent_doctor_adapter_runs_unchanged_and_writes_our_trace(cli, write, tmp_path: Path) -> None:
    write("c.json", {"version": 2, "name": "ad", "rules": [
        {"id": "refund-approved", "kind": "approval_bound", "tool": "payments.refund", "bind": "args_subset"},
        {"id": "no-shell", "kind": "deny_tool", "tool": "shell.*"}]})
    write("f.json", {"version": 1, "input": {"order": "A9"},
                     "tools": {"orders.get": {"paid": 10}, "payments.refund": {"id": "R-1"}}})
    write("adapter.py", ADAPTER)
    result = cli("record", "-c", "c.json", "--fixtures", "f.json", "--protocol", "agentdoctor", "--enforce",
                 "--fake-clock", "--out", "t.jsonl", "-f", "json", "--env", MARK, "--", sys.executable, "adapter.py")
    assert result.returncode == 1, result.stderr   # the shell call was denied: a safety failure
    events = [json.loads(line) for line in (tmp_path / "t.jsonl").read_text(encoding="utf-8").splitlines()]
    bare = [{key: value for key, value in event.items() if key not in ("seq", "time", "run_id")} for event in events]
    assert bare == [
        {"type": "run.start", "data": {"input": {"order": "A9"}, "protocol": 1}},
        {"type": "tool.call", "tool": "orders.get", "call_id": "1", "args": {"order": "A9"}},
        {"type": "tool.result", "tool": "orders.get", "call_id": "1", "ok": True, "result": {"paid": 10},
         "data": {"fixture": {"key": "orders.get"}}},
        {"type": "approval.granted", "tool": "payments.refund", "args": {"order": "A9"},
         "data": {"attested_by": "agent"}},
        {"type": "tool.call", "tool": "payments.refund", "call_id": "2", "args": {"order": "A9", "amount": 10}},
        {"type": "tool.result", "tool": "payments.refund", "call_id": "2", "ok": True, "result": {"id": "R-1"},
         "data": {"fixture": {"key": "payments.refund"}}},
        {"type": "tool.call", "tool": "shell.exec", "call_id": "3", "args": {"cmd": "rm"}},
        {"type": "tool.denied", "tool": "shell.exec", "call_id": "3", "reason": events[7]["reason"],
         "data": {"rule_ids": ["no-shell"]}},
        {"type": "run.completed", "status": "completed", "output": {
            "found": {"type": "tool_result", "callId": "1", "result": {"paid": 10}, "isError": False},
            "refund": {"type": "tool_result", "callId": "2", "result": {"id": "R-1"}, "isError": False},
            "denied": {"type": "tool_result", "callId": "3", "isError": True, "denied": True,
                       "result": {"error": events[7]["reason"]}}}},
    ]
    assert events[7]["reason"].startswith("no-shell: ")


def test_tool_faults_through_the_cli(cli, write) -> None:
    write("c.json", {"version": 1, "name": "c", "rules": [{"id": "answered", "kind": "tool_result_required"}]})
    write("f.json", FAULTS)
    write("s.json", [*START, *call("c1", "slow"), send("tool.call", call_id="c2", tool="stuck"), {"sleep": 0.1},
                     send("run.completed", status="failed")])
    result = cli("record", "-c", "c.json", "--fixtures", "f.json", "--fake-clock", "--out", "t.jsonl", "-f", "json",
                 "--idle-timeout-ms", "2000", "--env", MARK, "--", sys.executable, str(AGENT), "s.json", "r.jsonl")
    assert result.returncode == 1, result.stderr
    report = json.loads(result.stdout)
    assert [(v["rule_id"], v["event_seq"]) for v in report["violations"]] == [("answered", 4)]
    events = [json.loads(line) for line in Path(cli.cwd, "t.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [(e["type"], e.get("duration_ms")) for e in events] == [
        ("run.start", None), ("tool.call", None), ("tool.result", 300), ("tool.call", None), ("run.completed", None)]


def test_redaction_never_changes_a_verdict_and_reaches_what_the_harness_writes(tmp_path: Path) -> None:
    steps = [*START, send("agent.message", text="pin=1 " * 150_000), send("telemetry.x?token=tok-TYPE-111"),
             {"raw": '{"type": "tool.call", "call_id": "c", "tool": "t", "args": {"token": "tok-CUT-222\n'},
             {"sleep": 5}]
    plain = run_agent(tmp_path, steps, V2, FIXTURES, name="plain")
    secret = run_agent(tmp_path, steps, V2, FIXTURES, name="secret", redact=["pin", "token"])
    assert (secret.info.ended_by, secret.code) == (plain.info.ended_by, plain.code) == ("protocol:bad_json", 2)
    text = secret.trace.read_text(encoding="utf-8")
    assert "tok-TYPE-111" not in text and "tok-CUT-222" not in text and "pin=1" not in text
    # marked piece by piece, the string would pass a trace line's limit: it is the mark, whole
    assert secret.events[1]["data"] == {"text": "[redacted]"}
    with pytest.raises(InputError, match="--redact attested_by: names a field"):
        run_agent(tmp_path, steps, V2, FIXTURES, name="refused", redact=["attested_by"])


@pytest.mark.parametrize(("message", "kind", "key"), [
    ({"type": "tool_call", "callId": "1", "name": "a", "tool": "b"}, "tool.call", "tool"),
    ({"type": "tool_call", "call_id": "1", "callId": "2", "name": "a"}, "tool.call", "call_id"),
    ({"type": "tool_call", "callId": "1", "name": "a", "args": {}, "arguments": {}}, "tool.call", "args"),
    ({"type": "confirmation", "tool": "a", "name": "a"}, "approval.granted", "tool"),
])
def test_an_agent_doctor_message_naming_a_field_twice_is_a_protocol_error(
        tmp_path: Path, message: dict[str, Any], kind: str, key: str) -> None:
    """`name` and `tool` (or `callId` and `call_id`...) in one message: which is meant? The run ends
    as `protocol:field:<type>.<key>`, the field named as ours, as every field error is."""
    steps = [{"recv": True}, {"raw": json.dumps(message) + "\n"}, {"sleep": 5}]
    run = run_agent(tmp_path, steps, V2, FIXTURES, protocol="agentdoctor")
    assert _ending(run, f"protocol:field:{kind}.{key}")["data"]["offending"]["type"] == kind


DONE_AGENT = 'import sys; sys.stdin.readline(); print(\'{"type": "run.completed"}\', flush=True)'


@pytest.mark.parametrize("report", ["t.jsonl", "./sub/../t.jsonl.stderr.log", "answer.json", "input.json"])
def test_the_report_never_takes_the_place_of_a_file_the_run_reads_or_writes(cli, write, report) -> None:
    """--output naming the trace record is about to write (or its stderr log, a `$file` fixture,
    --input @FILE) is refused before the agent starts: the report replaced the trace it judged."""
    write("c.json", V2)
    write("answer.json", {"answer": 42})
    write("fx.json", {"version": 1, "tools": {"get": {"$file": "answer.json"}}})
    write("input.json", {"q": 1})
    result = cli("record", "-c", "c.json", "--fixtures", "fx.json", "--input", "@input.json", "--fake-clock",
                 "--out", "t.jsonl", "--output", report, "--", sys.executable, "-c", DONE_AGENT)
    assert result.returncode == 2
    assert "is a file of the run" in result.stderr and "write the report elsewhere" in result.stderr
    assert not (cli.cwd / "t.jsonl").exists()
    assert json.loads((cli.cwd / "answer.json").read_text()) == {"answer": 42}
    assert json.loads((cli.cwd / "input.json").read_text()) == {"q": 1}


def test_the_report_never_takes_the_place_of_a_trace_of_a_repeat(cli, write) -> None:
    write("c.json", V2)
    write("fx.json", {"version": 1, "tools": {}})
    result = cli("record", "-c", "c.json", "--fixtures", "fx.json", "--fake-clock", "--repeat", "2", "--out-dir", "od",
                 "--output", "od/run-2.jsonl", "--", sys.executable, "-c", DONE_AGENT)
    assert result.returncode == 2 and "--output od/run-2.jsonl is a file of the run" in result.stderr
    assert not (cli.cwd / "od" / "run-1.jsonl").exists()   # refused before the first run


@pytest.mark.parametrize(("report", "said"), [("folder", "agent-invariants: folder: is a directory"),
                                              ("missing/r.txt", "agent-invariants: missing/r.txt: cannot write: "
                                                                "no such folder"),
                                              ("/proc/version", "agent-invariants: /proc/version: cannot write: "
                                                                "its folder takes no new files")])
@pytest.mark.parametrize("repeat", [[], ["--repeat", "2", "--out-dir", "od"]])
def test_an_output_that_cannot_be_written_is_refused_before_the_agent_runs(cli, write, report, said,
                                                                           repeat) -> None:
    """README, `--output`: a folder, a missing folder, or a folder that takes no new file (read-only,
    /proc) is refused "before anything is written": the agent does not run (its side effects, a
    real server's calls), and no trace is written."""
    write("c.json", V2)
    write("fx.json", {"version": 1, "tools": {}})
    (cli.cwd / "folder").mkdir()
    agent = "open('ran', 'a').write('x'); " + DONE_AGENT
    result = cli("record", "-c", "c.json", "--fixtures", "fx.json", "--fake-clock", *(repeat or ["--out", "t.jsonl"]),
                 "--output", report, "--", sys.executable, "-c", agent)
    assert (result.returncode, result.stderr, result.stdout) == (2, said + "\n", "")
    assert not (cli.cwd / "ran").exists()
    assert not (cli.cwd / "t.jsonl").exists() and not (cli.cwd / "od").exists()


@pytest.mark.parametrize("run", [["--out", "new/deeper/t.jsonl"], ["--repeat", "2", "--out-dir", "new/deeper"]])
def test_an_output_in_the_folder_the_trace_makes_is_written(cli, write, run) -> None:
    """The folders of the trace are made before the report is written: a report beside the trace,
    or in a folder above it, in folders that do not exist yet, is no missing folder."""
    write("c.json", V2)
    write("fx.json", {"version": 1, "tools": {}})
    for report in ("new/deeper/report.json", "new/report.json"):
        result = cli("record", "-c", "c.json", "--fixtures", "fx.json", "--fake-clock", "--force", *run,
                     "--format", "json", "--output", report, "--", sys.executable, "-c",
                     DONE_AGENT.replace('"run.completed"', '"run.completed", "output": 1'))
        assert result.returncode == 0, result.stderr
        assert json.loads((cli.cwd / report).read_text())["passed"] is True


@pytest.mark.parametrize("out", ["answer.json", "input.json"])
def test_force_never_replaces_a_file_fixture_or_an_input_file(cli, write, out) -> None:
    write("c.json", V2)
    write("answer.json", {"answer": 42})
    write("fx.json", {"version": 1, "tools": {"get": {"$file": "answer.json"}}})
    write("input.json", {"q": 1})
    result = cli("record", "-c", "c.json", "--fixtures", "fx.json", "--input", "@input.json", "--fake-clock",
                 "--out", out, "--force", "--", sys.executable, "-c", DONE_AGENT)
    assert result.returncode == 2 and f"--out {out} is an input of the run" in result.stderr
    assert json.loads((cli.cwd / "answer.json").read_text()) == {"answer": 42}
    assert json.loads((cli.cwd / "input.json").read_text()) == {"q": 1}


def test_a_tool_snapshot_is_never_written_over_an_input(cli, write) -> None:
    write("c.json", V2)
    result = cli("record", "-c", "c.json", "--mcp", "unused", "--write-tool-snapshot", "c.json", "--force", "--out",
                 "t.jsonl", "--", "true")
    assert result.returncode == 2 and "is an input of the run" in result.stderr
    write("old.json", {"version": 1, "tools": {}})
    again = cli("record", "-c", "c.json", "--mcp", "unused", "--write-tool-snapshot", "old.json", "--out", "t.jsonl",
                "--", "true")
    assert again.returncode == 2 and "old.json: already exists" in again.stderr


@pytest.mark.parametrize("snapshot", ["t.jsonl", "t.jsonl.stderr.log", "./sub/../t.jsonl"])
def test_a_tool_snapshot_is_never_the_trace_or_its_log(cli, write, snapshot: str) -> None:
    """Found by the fourth hunt: `--write-tool-snapshot` naming the trace being written (with
    --force) or its stderr log was taken, and the snapshot was lost under them, exit 0."""
    write("c.json", V2)
    (cli.cwd / "sub").mkdir()
    result = cli("record", "-c", "c.json", "--mcp", "unused", "--write-tool-snapshot", snapshot, "--force", "--out",
                 "t.jsonl", "--", "true")
    assert result.returncode == 2
    written = "t.jsonl.stderr.log" if snapshot.endswith(".log") else "t.jsonl"
    assert result.stderr == (f"agent-invariants: --write-tool-snapshot {snapshot} is a file of the run ({written}); "
                             "write the snapshot elsewhere\n")
    assert sorted(path.name for path in cli.cwd.iterdir()) == ["c.json", "sub"]


def test_enforcement_asks_every_rule_that_could_fire_even_one_whose_interests_change(tmp_path: Path) -> None:
    contract = {"version": 1, "name": "c", "rules": [
        {"id": "stop", "kind": "stop_is_final"}, {"id": "no-refund", "kind": "deny_tool", "tool": "refund"}]}
    steps = [*START, *call("c1", "search"), *call("c2", "refund"), send("control.stop", reason="user"),
             *call("c3", "search"), *DONE]
    run = run_agent(tmp_path, steps, contract, {"version": 1, "tools": {"*": "ok"}}, enforce=True)
    assert [(event["type"], event.get("call_id")) for event in run.events if event["type"].startswith("tool.")] == [
        ("tool.call", "c1"), ("tool.result", "c1"), ("tool.call", "c2"), ("tool.denied", "c2"),
        ("tool.call", "c3"), ("tool.denied", "c3")]
    assert [event["data"]["rule_ids"] for event in run.events if event["type"] == "tool.denied"] == [
        ["no-refund"], ["stop"]]


def test_what_an_mcp_server_starts_does_not_outlive_the_run(cli, write, tmp_path: Path) -> None:
    import os

    write("c.json", V2)
    write("s.json", [*START, *DONE])
    result = cli("record", "-c", "c.json", "--mcp", f"{sys.executable} {SERVER} --spawn {tmp_path / 'pid'}",
                 "--out", "t.jsonl", "--env", MARK, "--", sys.executable, str(AGENT), "s.json", "r.jsonl")
    assert result.returncode == 0, result.stderr
    sleeper = int((tmp_path / "pid").read_text(encoding="utf-8"))
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        try:
            os.kill(sleeper, 0)
        except ProcessLookupError:
            break
        time.sleep(0.05)
    with pytest.raises(ProcessLookupError):
        os.kill(sleeper, 0)


STUBBORN_SERVER = f"""import atexit, os, runpy, signal, sys, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
open("pid-" + str(os.getpid()), "w").close()
atexit.register(time.sleep, 60)   # the end of its input ends it not
sys.argv = sys.argv[:1]
runpy.run_path({str(SERVER)!r}, run_name="__main__")
"""


def _alive(folder: Path) -> list[int]:
    """The stubborn servers started in `folder` that still run."""
    pids = [int(path.name.removeprefix("pid-")) for path in folder.glob("pid-*")]
    return [pid for pid in pids if Path(f"/proc/{pid}").exists()
            and "zombie" not in Path(f"/proc/{pid}/status").read_text().lower()]


def test_servers_that_do_not_end_are_ended_side_by_side(cli, write, tmp_path: Path) -> None:
    """Servers that ignore the end of their input and SIGTERM get the SDK's few seconds of grace
    each: three of them took 14 s to end one after the other; side by side, about 5."""
    write("c.json", V2)
    write("stubborn.py", STUBBORN_SERVER)
    started = time.monotonic()
    result = cli("record", "-c", "c.json", *[option for _ in range(3) for option in
                                             ("--mcp", f"{sys.executable} stubborn.py")],
                 "--out", "t.jsonl", "--env", MARK, "--", "true")
    took = time.monotonic() - started
    assert result.returncode == 2, result.stderr   # (the agent ended without a terminal event)
    assert len(list(tmp_path.glob("pid-*"))) == 3
    assert _alive(tmp_path) == []
    assert took < 10, took


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_an_interrupt_while_the_servers_end_ends_them_and_the_report_is_written(tmp_path: Path, signum: int) -> None:
    """Ctrl-C while `record` waited for servers that do not end left them running; then it ended
    them, and exited 130 without the report of the run, which was over and checked (hunt 104).
    The interrupt ends the wait: the servers at once, and the report is written."""
    (tmp_path / "c.json").write_text(json.dumps(V2), encoding="utf-8")
    (tmp_path / "stubborn.py").write_text(STUBBORN_SERVER, encoding="utf-8")
    process = subprocess.Popen(
        [sys.executable, "-m", "agent_invariants", "record", "-c", "c.json",
         *[option for _ in range(2) for option in ("--mcp", f"{sys.executable} stubborn.py")],
         "--out", "t.jsonl", "-f", "json", "--", "sh", "-c", "echo done >&2"], cwd=tmp_path,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 15
    while not (tmp_path / "t.jsonl.stderr.log").exists() and time.monotonic() < deadline:
        time.sleep(0.02)   # (written once the agent has ended: then the check, then the servers' end)
    time.sleep(1)   # record waits for the servers to end (about 4 s)
    started = time.monotonic()
    process.send_signal(signum)
    out, err = process.communicate(timeout=20)
    assert time.monotonic() - started < 3
    assert process.returncode == 2, err   # the report's own: the agent ended without a terminal event
    assert json.loads(out)["record"]["ended_by"] == "exit:0"
    time.sleep(0.5)
    assert len(list(tmp_path.glob("pid-*"))) == 2
    assert _alive(tmp_path) == []


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_a_signal_while_the_servers_start_ends_them(tmp_path: Path, signum: int) -> None:
    """Found by a second outside reading: SIGHUP (a closed terminal) while a server started killed
    `record` at once, by its default, and left the server running, with no parent; SIGTERM ended
    it. SIGHUP ends `record` as SIGTERM does there too: the server is ended, nothing is written."""
    (tmp_path / "c.json").write_text(json.dumps(V2), encoding="utf-8")
    (tmp_path / "silent.py").write_text('import os, time\nopen("pid-" + str(os.getpid()), "w").close()\n'
                                        'time.sleep(60)\n', encoding="utf-8")
    process = subprocess.Popen(
        [sys.executable, "-m", "agent_invariants", "record", "-c", "c.json", "--mcp", f"{sys.executable} silent.py",
         "--mcp-start-timeout-ms", "30000", "--out", "t.jsonl", "--", "true"], cwd=tmp_path,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 20
    while not list(tmp_path.glob("pid-*")) and time.monotonic() < deadline:
        time.sleep(0.02)   # (the server runs, and will never answer initialize)
    assert list(tmp_path.glob("pid-*")), process.stderr
    process.send_signal(signum)
    out, err = process.communicate(timeout=20)
    assert (process.returncode, out) == (143, b""), err   # (exit 143 for both, as README's exit codes say)
    time.sleep(0.5)
    assert _alive(tmp_path) == []
    assert not (tmp_path / "t.jsonl").exists()


# --- the trace is what record wrote -----------------------------------------------------------

@pytest.mark.parametrize("redacting", [False, True], ids=["plain", "redacting"])
@pytest.mark.parametrize("edit", [["orders.get", "orders.put"], ['"orders.get"', "orders.get"]],
                         ids=["another-tool", "no-longer-json"])
def test_a_trace_the_agent_rewrote_is_refused_rather_than_judged(tmp_path: Path, redacting: bool,
                                                                 edit: list[str]) -> None:
    """The agent (or a process it left behind) edits the trace file between its events: the run
    is not judged on what it wrote there, whether the rules read that file or the raw copy, and
    the refusal says so even when the edit left a line that is not JSON (not a parse error)."""
    trace = tmp_path / "run.jsonl"
    steps = [*START, *call("c1", "orders.get", {"order": "A9"}), {"rewrite": [str(trace), *edit]}, *DONE]
    options = {"redact": ["password"]} if redacting else {}
    with pytest.raises(InputError) as refused:
        run_agent(tmp_path, steps, V2, FIXTURES, out=str(trace), **options)
    assert str(refused.value) == (f"{trace}: the trace is not what record wrote: something else wrote to it while "
                                  "the run went on (the agent?), so the run is not judged")
    assert leftover_agents() == []


def test_an_untouched_trace_is_judged_with_and_without_redaction(tmp_path: Path) -> None:
    steps = [*START, *call("c1", "orders.get", {"order": "A9"}), *DONE]
    for name, options in (("plain", {}), ("redacting", {"redact": ["password"]})):
        run = run_agent(tmp_path, steps, V2, FIXTURES, name=name, **options)
        assert [event.get("tool") for event in run.bare()][1:3] == ["orders.get", "orders.get"]
        assert run.info.ended_by == "completed"


def test_the_report_may_go_to_the_terminal_the_input_comes_from(tmp_path: Path) -> None:
    """--input @/dev/stdin and --output /dev/stdout on one terminal are one device, not one file:
    only a regular file the run reads or writes is refused as --output."""
    import os
    import pty
    import subprocess

    (tmp_path / "c.json").write_text(json.dumps(V2))
    (tmp_path / "fx.json").write_text(json.dumps({"version": 1, "tools": {}}))
    leader, follower = pty.openpty()
    try:
        os.write(leader, b'{"q": 1}\n\x04')
        result = subprocess.run(
            [sys.executable, "-m", "agent_invariants", "record", "-c", "c.json", "--fixtures", "fx.json",
             "--fake-clock", "--out", "t.jsonl", "--input", "@/dev/stdin", "-f", "json", "--output", "/dev/stdout",
             "--", sys.executable, "-c", DONE_AGENT],
            cwd=tmp_path, stdin=follower, stdout=follower, stderr=subprocess.PIPE, timeout=60)
    finally:
        os.close(leader)
        os.close(follower)
    assert result.returncode == 0, result.stderr
    assert json.loads((tmp_path / "t.jsonl").read_text().splitlines()[0])["data"]["input"] == {"q": 1}


def test_the_command_says_what_its_check_noticed_as_check_does(cli: Any) -> None:
    """README, No silent passes: the check notices a rule that checked nothing and says so on
    stderr; `record` checks its trace with the same evaluator, so it says the same (the reckless
    run never claims completion: `done-means-verified` judged nothing)."""
    record_dir = Path(__file__).parent.parent / "examples" / "record"
    result = cli("record", "--contract", str(record_dir / "contract.json"), "--fixtures",
                 str(record_dir / "fixtures.json"), "--enforce", "--fake-clock", "--out", "run.jsonl",
                 "--env", "AGENT_MODE=reckless", "--", sys.executable, str(record_dir / "agent.py"))
    assert result.returncode == 1, result.stderr
    said = 'agent-invariants: warning: run.jsonl: rule "done-means-verified" (completion_requires_outcome) ' \
        "checked nothing in this trace"
    assert said in result.stderr
    check = cli("check", "--contract", str(record_dir / "contract.json"), "--trace", "run.jsonl")
    assert said in check.stderr


@pytest.mark.parametrize(("given", "problem"), [
    ('{"a": [1,,2]}', "not JSON: invalid JSON at line 1, column 10: invalid character"),
    ('{"a": 1e999}', "not JSON: invalid JSON at line 1, column 7: 1e999 is out of range (Infinity is not a number "
                     "JSON allows)"),
])
def test_an_input_given_inline_that_is_not_json_is_told_where(tmp_path: Path, given: str, problem: str) -> None:
    contract, fixtures = _inputs(tmp_path)
    with pytest.raises(InputError) as refused:
        record(contract, [sys.executable, "-c", "pass"],
               RecordOptions(fixtures=str(fixtures), input=given, out=str(tmp_path / "t.jsonl")))
    assert str(refused.value) == f"--input: {problem}"


@pytest.mark.parametrize(("content", "problem"), [
    (b'{"a":\n  [1,,2]}', "not JSON: invalid JSON at line 2, column 6: invalid character"),
    (b'{"a": [1,', "not JSON: invalid JSON at line 1, column 10: the JSON ends before the value is complete"),
    ('{"a": 1}'.encode("utf-16"), "is UTF-16 text (it starts with a UTF-16 byte order mark), not UTF-8: save it as "
                                  "UTF-8 (e.g. iconv -f UTF-16 -t UTF-8)"),
    (b'\xef\xbb\xbf{"a": 1}', "starts with a UTF-8 byte order mark, which these JSON files may not start with; save "
                              "the file without it"),
])
def test_an_input_file_that_is_not_json_is_told_where_as_every_file_is(tmp_path: Path, content: bytes,
                                                                          problem: str) -> None:
    """`--input @FILE` passed the decoder's own words on ("invalid character (byte 9)", "Input data
    was truncated"): it is told the line and column, or the encoding, as contracts are."""
    contract, fixtures = _inputs(tmp_path)
    given = tmp_path / "input.json"
    given.write_bytes(content)
    with pytest.raises(InputError) as refused:
        record(contract, [sys.executable, "-c", "pass"],
               RecordOptions(fixtures=str(fixtures), input=f"@{given}", out=str(tmp_path / "t.jsonl")))
    assert str(refused.value) == f"--input {given}: {problem}"
    assert not (tmp_path / "t.jsonl").exists()


def test_a_closed_standard_output_is_refused_before_the_agent_runs(tmp_path: Path) -> None:
    """`record >&-` ran the agent (its side effects too), then found the report had nowhere to go."""
    contract, fixtures = _inputs(tmp_path)
    ran = tmp_path / "ran"
    agent = f"{sys.executable} -c 'open(\"{ran}\", \"w\")'"
    command = (f"exec {sys.executable} -m agent_invariants record --contract {contract} --fixtures {fixtures} "
               f"--out {tmp_path / 't.jsonl'} --fake-clock -- {agent} >&-")
    result = subprocess.run(["bash", "-c", command], capture_output=True, text=True, timeout=30)
    assert (result.returncode, result.stderr) == (
        2, "agent-invariants: standard output is closed: the report has nowhere to go (name a file with --output)\n")
    assert not ran.exists() and not (tmp_path / "t.jsonl").exists()
    (tmp_path / "read-only").write_text("")
    result = subprocess.run(["bash", "-c", command.replace(">&-", f"1<{tmp_path / 'read-only'}")], capture_output=True,
                            text=True, timeout=30)
    assert (result.returncode, result.stderr) == (
        2, "agent-invariants: standard output is open for reading only: the report has nowhere to go (name a file "
           "with --output)\n")
    assert not ran.exists() and not (tmp_path / "t.jsonl").exists()
