"""`record --enforce`: a reference model of which calls are denied and what the trace then holds.

Written from spec v2 §8 (the `--enforce` paragraph and its example) and §10 points 60-84 (record),
with point 74 ("Which rules `--enforce` applies, and to which calls") and point 75 ("Recording and
answering a denial") at its centre. The model below is plain Python: a small evaluator of the
enforced kinds (deny_tool, allow_tools, require_approval, approval_bound, tool_calls `max`,
retry_limit, stop_is_final, tool_args without `$from_output`) over the event list the harness
writes, and a simulation of the harness (point 65's table) that asks that evaluator, call by call,
whether to deny. A property test compares it with `record --enforce` on random contracts and agent
scripts; hand-written cases pin the §8 example and each enforcement point.
"""
from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from support import examples

Json = Any
Event = dict[str, Any]
Rule = dict[str, Any]
RunCli = Callable[..., subprocess.CompletedProcess[str]]

# A scripted agent (§8 "Protocol", point 60): reads run.start, then sends its messages one JSON line
# at a time; after a tool.call or an approval.request it reads the one reply (point 63, point 65).
AGENT = """\
import json, sys
messages = json.load(open(sys.argv[1], encoding="utf-8"))
replies = [json.loads(sys.stdin.readline())]
for message in messages:
    sys.stdout.write(json.dumps(message) + "\\n")
    sys.stdout.flush()
    if message["type"] in ("tool.call", "approval.request"):
        replies.append(json.loads(sys.stdin.readline()))
json.dump(replies, open(sys.argv[2], "w", encoding="utf-8"))
"""

DEFAULT_ALLOWED_AFTER = ["run.completed", "run.failed", "telemetry.*"]
ENFORCED_KINDS = {"deny_tool", "allow_tools", "require_approval", "approval_bound", "tool_calls",
                  "retry_limit", "stop_is_final", "tool_args", "deny_event", "require_order"}


# -- the grammar the model needs: globs (v1 §2.7), JSON equality and subset match trees (v2 §2) ----

def glob(pattern: str, value: Any) -> bool:
    """v1 §2.7: `*` and `?` only, anchored, case-sensitive; never matches an absent value."""
    if not isinstance(value, str):
        return False
    regex = "".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in pattern)
    return re.fullmatch(regex, value) is not None


def json_equal(a: Json, b: Json) -> bool:
    """§2 "Equality is JSON-type-strict and structural: true≠1, 1=1.0, equal key sets"."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return float(a) == float(b)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b


def is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def subset_match(node: Json, actual: Json) -> bool:
    """A match tree without references (§2 "Match tree"; point 9: an absent key is a mismatch)."""
    if isinstance(node, dict) and node and all(k.startswith("$") for k in node):
        for op, operand in node.items():
            if op == "$in" and not any(json_equal(v, actual) for v in operand):
                return False
            if op in ("$lte", "$gte") and not (is_number(actual)
                                                and (actual <= operand if op == "$lte" else actual >= operand)):
                return False
        return True
    if isinstance(node, dict):
        return isinstance(actual, dict) and all(k in actual and subset_match(v, actual[k]) for k, v in node.items())
    return json_equal(node, actual)


# -- the evaluator: violations (seq positions) per rule over an event list -------------------------

@dataclass
class Trace:
    events: list[Event]

    def calls(self) -> list[int]:
        return [i for i, e in enumerate(self.events) if e["type"] == "tool.call"]

    def result_of(self, index: int) -> Event | None:
        """Point 3: the result paired with the call at `index` (call ids are unique here)."""
        call_id = self.events[index].get("call_id")
        for e in self.events[index + 1:]:
            if e["type"] == "tool.result" and e.get("call_id") == call_id:
                return e
        return None


def require_approval_fails(trace: Trace, rule: Rule, i: int) -> bool:
    """v1 §4.3: scan back (within_events) for a grant meeting the id and scope conditions."""
    call = trace.events[i]
    low = max(0, i - rule["within_events"]) if "within_events" in rule else 0
    for j in range(i - 1, low - 1, -1):
        g = trace.events[j]
        if g["type"] != "approval.granted" or g.get("approved") is False:
            continue
        if call.get("approval_id") and g.get("approval_id") != call["approval_id"]:
            continue
        if "scope" in rule and not glob(rule["scope"], g.get("approval_scope")):
            continue
        return False
    return True


def covers(rule: Rule, grant: Event, call: Event) -> bool:
    """§3.5 "Coverage", points 21 and 67 (all but age, time and approver, which we do not generate)."""
    if grant["type"] != "approval.granted" or grant.get("approved") is False:
        return False
    if "tool" in grant and grant["tool"] != call.get("tool"):
        return False
    if "scope" in rule:
        if not glob(rule["scope"], grant.get("approval_scope")):
            return False
    elif "tool" not in grant:
        return False
    if "approval_id" in call and grant.get("approval_id") != call["approval_id"]:
        return False
    bind = rule.get("bind", "none")
    if bind == "args" and not ("args" in grant and "args" in call and json_equal(grant["args"], call["args"])):
        return False
    if bind == "args_subset" and not ("args" in grant and "args" in call and subset_match(grant["args"], call["args"])):
        return False
    if bind == "call_id" and not ("call_id" in grant and "call_id" in call and grant["call_id"] == call["call_id"]):
        return False
    if "attested_by" in rule:
        attested = grant.get("data", {}).get("attested_by")
        if not any(glob(p, attested) for p in rule["attested_by"]):
            return False
    return True


def revoked(trace: Trace, j: int, i: int) -> bool:
    """§3.5 condition 7 with the default `revoked_by` and point 21: an `approval.revoked` between the
    grant at j and the call at i that equals the grant on the approval_id, approval_scope and tool it
    carries (carrying none: every grant), or a later `approved: false` grant with the same id."""
    grant = trace.events[j]
    for e in trace.events[j + 1:i]:
        keys = [k for k in ("approval_id", "approval_scope", "tool") if k in e]
        if e["type"] == "approval.revoked" and all(e[k] == grant.get(k) for k in keys):
            return True
        if e["type"] == "approval.granted" and e.get("approved") is False and "approval_id" in e \
                and e["approval_id"] == grant.get("approval_id"):
            return True
    return False


def approval_bound_failures(trace: Trace, rule: Rule) -> list[int]:
    """§3.5 "Semantics": the nearest covering grant is used and, under one_use, consumed."""
    consumed: set[int] = set()
    failed = []
    for i in trace.calls():
        call = trace.events[i]
        if not glob(rule["tool"], call.get("tool")):
            continue
        for j in range(i - 1, -1, -1):
            if j not in consumed and covers(rule, trace.events[j], call) and not revoked(trace, j, i):
                if rule.get("one_use", True):
                    consumed.add(j)
                break
        else:
            failed.append(i)
    return failed


def from_result_candidates(trace: Trace, ref: dict[str, Any], subject: int) -> list[Json]:
    """§2 `$from_result` steps 1 and 4, with ok_only's default true; point 3 for a result's tool."""
    out = []
    for i in trace.calls():
        if i >= subject or not glob(ref["tool"], trace.events[i].get("tool")):
            continue
        result = trace.result_of(i)
        if result is None or trace.events.index(result) >= subject or result.get("ok") is False:
            continue
        value = result.get("result")
        if "path" in ref:
            if not isinstance(value, dict) or ref["path"] not in value:
                continue
            value = value[ref["path"]]
        out.append(value)
    return out


def tool_args_fails(trace: Trace, rule: Rule, i: int) -> bool:
    """§3.1: args_missing, mismatch or reference_unresolved at the call (all fail the rule)."""
    call = trace.events[i]
    args = call.get("args")
    if not isinstance(args, dict):
        return True
    for key, node in rule["match"].items():
        if isinstance(node, dict) and "$from_result" in node:
            candidates = from_result_candidates(trace, node["$from_result"], i)
            if not candidates:
                return True  # reference_unresolved (no_candidates)
            if key not in args or not any(json_equal(c, args[key]) for c in candidates):
                return True
        elif key not in args or not subset_match(node, args[key]):
            return True
    return False


def matches(matcher: dict[str, Any], event: Event) -> bool:
    """v1 §2.4 (point 15: a v1 matcher reads the event's own fields): globs, and `ok` exactly."""
    return all(event.get(k) is v if k == "ok" else glob(v, event.get(k) if k != "type" else event["type"])
               for k, v in matcher.items())


def retry_key(rule: Rule, call: Event) -> str:
    """v1 §4.7: the group is the tool (group_by tool), else the call_signature, else the tool."""
    return str(call["tool"] if rule.get("group_by") == "tool" else call.get("call_signature", call["tool"]))


def violations(trace: Trace, rule: Rule) -> list[int]:
    """Positions of the events this rule puts a violation at, over the whole list, sorted, unique."""
    kind, events, found = rule["kind"], trace.events, []
    calls = trace.calls()
    if kind == "deny_tool":
        found = [i for i in calls if glob(rule["tool"], events[i].get("tool"))]
    elif kind == "allow_tools":
        found = [i for i in calls if not any(glob(p, events[i].get("tool")) for p in rule["tools"])]
    elif kind == "require_approval":
        found = [i for i in calls
                 if glob(rule["tool"], events[i].get("tool")) and require_approval_fails(trace, rule, i)]
    elif kind == "approval_bound":
        found = approval_bound_failures(trace, rule)
    elif kind == "deny_event":
        found = [i for i, e in enumerate(events) if matches(rule["match"], e)]
    elif kind == "require_order":
        found = [i for i, e in enumerate(events) if matches(rule["after"], e)
                 and not any(matches(rule["before"], b) for b in events[:i])]
    elif kind == "stop_is_final":
        allowed = rule.get("allowed_after", DEFAULT_ALLOWED_AFTER)
        stops = [i for i, e in enumerate(events) if glob(rule.get("stop_type", "control.stop"), e["type"])
                 and ("reasons" not in rule or any(glob(p, e.get("reason")) for p in rule["reasons"]))]
        found = [i for s in stops for i in range(s + 1, len(events))
                 if not any(glob(p, events[i]["type"]) for p in allowed)]
    elif kind == "retry_limit":
        groups: dict[str, list[int]] = {}
        for i in calls:
            if glob(rule.get("tool", "*"), events[i].get("tool")):
                key = retry_key(rule, events[i])
                groups.setdefault(key, []).append(i)
        found = [members[rule["max_attempts"]] for members in groups.values() if len(members) > rule["max_attempts"]]
    elif kind == "tool_calls":
        counted = [i for i in calls if glob(rule["tool"], events[i].get("tool"))]
        if rule.get("count") == "successful":
            counted = [i for i in counted if (r := trace.result_of(i)) is not None and r.get("ok") is not False]
        found = counted[rule["max"]:rule["max"] + 1]
    elif kind == "tool_args":
        subjects = [i for i in calls if glob(rule["tool"], events[i].get("tool"))]
        if "call_index" in rule:
            subjects = subjects[rule["call_index"]:rule["call_index"] + 1]
        found = [i for i in subjects if tool_args_fails(trace, rule, i)]
    return sorted(set(found))


def call_missing(trace: Trace, rule: Rule) -> bool:
    """§3.1 `call_missing` (no seq): a tool_args rule with call_index whose k-th call never came."""
    if rule["kind"] != "tool_args" or "call_index" not in rule:
        return False
    matching = [i for i in trace.calls() if glob(rule["tool"], trace.events[i].get("tool"))]
    return len(matching) <= int(rule["call_index"])


def rule_fails(trace: Trace, rule: Rule) -> bool:
    return bool(violations(trace, rule)) or call_missing(trace, rule)


def denies(trace: Trace, rule: Rule) -> bool:
    """Point 74: does this rule deny the call that ends `trace` (the prefix plus the call)?"""
    if rule.get("severity") == "warning" or rule["kind"] not in ENFORCED_KINDS:
        return False
    i = len(trace.events) - 1
    call, events = trace.events[i], trace.events
    if rule["kind"] == "tool_calls":
        if not glob(rule["tool"], call.get("tool")):
            return False
        earlier = [j for j in trace.calls()[:-1] if glob(rule["tool"], events[j].get("tool"))]
        if rule.get("count") == "successful":
            earlier = [j for j in earlier if (r := trace.result_of(j)) is not None and r.get("ok") is not False]
            return len(earlier) >= int(rule["max"])
        return len(earlier) + 1 > int(rule["max"])
    if rule["kind"] == "retry_limit":
        if not glob(rule.get("tool", "*"), call.get("tool")):
            return False
        same = [j for j in trace.calls() if glob(rule.get("tool", "*"), events[j].get("tool"))
                and retry_key(rule, events[j]) == retry_key(rule, call)]
        return len(same) > int(rule["max_attempts"])
    return i in violations(trace, rule)


# -- the harness: point 65's table, the fixtures (points 69, 70, 72) and approvals (point 64) ------

@dataclass
class Outcome:
    events: list[Event]
    findings: int = 0
    replies: list[dict[str, Any]] = field(default_factory=list)


def answer(fixtures: dict[str, Any], trace: Trace, call: Event) -> tuple[bool, Json, bool]:
    """(ok, result, missed) for a call. Keys here are exact tool names (point 70)."""
    fixture = fixtures["tools"].get(call["tool"])
    if fixture is None:
        return False, {"error": "no fixture"}, True
    if not (isinstance(fixture, dict) and list(fixture) == ["$cases"]):
        return True, fixture, False
    index = sum(1 for e in trace.events[:-1] if e["type"] == "tool.call" and e.get("tool") == call["tool"])
    for case in fixture["$cases"]:
        if "call_index" in case and case["call_index"] != index:
            continue
        if "args" in case and ("args" not in call or not subset_match(case["args"], call["args"])):
            continue
        return case.get("ok", True), case.get("result"), False
    return False, {"error": "no fixture"}, True


def simulate(contract_rules: list[Rule], fixtures: dict[str, Any], messages: list[dict[str, Any]]) -> Outcome:
    out = Outcome([{"type": "run.start"}])
    for message in messages:
        kind = message["type"]
        if kind == "tool.call":
            call = {k: v for k, v in message.items()}
            out.events.append(call)
            trace = Trace(out.events)
            firing = [r["id"] for r in contract_rules if denies(trace, r)]
            if firing:
                out.events.append({"type": "tool.denied", "tool": call["tool"], "call_id": call["call_id"],
                                   "rule_ids": firing})
                out.replies.append({"type": "tool.denied", "call_id": call["call_id"], "rule": firing[0]})
            else:
                ok, result, missed = answer(fixtures, trace, call)
                out.findings += missed
                out.events.append({"type": "tool.result", "tool": call["tool"], "call_id": call["call_id"],
                                   "ok": ok, "result": result, "missed": missed})
                out.replies.append({"type": "tool.result", "call_id": call["call_id"], "ok": ok, "result": result})
        elif kind == "approval.request":
            out.events.append({"type": "approval.requested", "approval_id": message["approval_id"],
                               "tool": message["tool"], "args": message["args"]})
            entry = next((a for a in fixtures.get("approvals", []) if glob(a["tool"], message["tool"])
                          and ("args" not in a or subset_match(a["args"], message["args"]))), None)
            grant = {"type": "approval.granted", "approval_id": message["approval_id"], "tool": message["tool"],
                     "args": message["args"], "approved": entry is not None and entry["decision"] == "approve",
                     "data": {"attested_by": "harness"}}
            if entry is not None and "approval_scope" in entry:
                grant["approval_scope"] = entry["approval_scope"]
            out.findings += entry is None
            out.events.append(grant)
            out.replies.append({"type": "approval.decision", "approval_id": message["approval_id"],
                                "approved": grant["approved"]})
        elif kind in ("approval.granted", "approval.revoked"):
            out.events.append({**message, "data": {"attested_by": "agent"}})
        else:
            out.events.append(dict(message))
    return out


def expected_exit(rules: list[Rule], outcome: Outcome) -> int:
    """Point 83: 1 if the check has an error, else 2 if a finding (fixture or approval miss), else 0."""
    trace = Trace(outcome.events)
    if any(rule_fails(trace, r) for r in rules if r.get("severity", "error") == "error"):
        return 1
    return 2 if outcome.findings else 0


# -- running the product ----------------------------------------------------------------------------

@dataclass
class Run:
    result: subprocess.CompletedProcess[str]
    trace: list[Event]
    replies: list[dict[str, Any]]
    report: dict[str, Any]


def record(cli: RunCli, folder: Path, rules: list[Rule], fixtures: dict[str, Any],
           messages: list[dict[str, Any]], *extra: str, enforce: bool = True) -> Run:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "agent.py").write_text(AGENT, encoding="utf-8")
    (folder / "c.json").write_text(json.dumps({"version": 2, "name": "enforce", "rules": rules}), encoding="utf-8")
    (folder / "f.json").write_text(json.dumps({"version": 1, **fixtures}), encoding="utf-8")
    (folder / "m.json").write_text(json.dumps(messages), encoding="utf-8")
    args = ["record", "--contract", str(folder / "c.json"), "--fixtures", str(folder / "f.json"),
            "--fake-clock", "--out", str(folder / "t.jsonl"), "--format", "json", *extra]
    if enforce:
        args.append("--enforce")
    result = cli(*args, "--", sys.executable, str(folder / "agent.py"), str(folder / "m.json"),
                 str(folder / "r.json"))
    trace_path, replies_path = folder / "t.jsonl", folder / "r.json"
    lines = trace_path.read_text(encoding="utf-8").splitlines() if trace_path.exists() else []
    trace = [json.loads(line) for line in lines]
    replies = json.loads(replies_path.read_text(encoding="utf-8")) if replies_path.exists() else []
    report = json.loads(result.stdout) if result.stdout.strip() else {}
    return Run(result, trace, replies, report)


def shape(events: list[Event]) -> list[tuple[str, str | None, str | None]]:
    return [(e["type"], e.get("tool"), e.get("call_id")) for e in events]


def failing_seqs(report: dict[str, Any]) -> dict[str, list[int]]:
    return {r["rule_id"]: sorted({v["event_seq"] for v in r["violations"] if "event_seq" in v})
            for r in report["results"]}


def compare(cli: RunCli, folder: Path, rules: list[Rule], fixtures: dict[str, Any],
            messages: list[dict[str, Any]], *extra: str) -> Run:
    """Run `record --enforce` and assert that it does what the model says, in every respect."""
    model = simulate(rules, fixtures, messages)
    run = record(cli, folder, rules, fixtures, messages, *extra)
    assert run.result.returncode == expected_exit(rules, model), (run.result.returncode, run.result.stderr, run.trace)
    # Point 65: the events in order, with their tools and call ids.
    assert shape(run.trace) == shape(model.events), run.trace
    for got, want in zip(run.trace, model.events, strict=True):
        if want["type"] == "tool.denied":
            # Point 75: reason `<rule_id>: <message>` of the first firing rule; data.rule_ids lists all.
            assert got["reason"].startswith(want["rule_ids"][0] + ": "), got
            assert got["data"]["rule_ids"] == want["rule_ids"], got
            assert "ok" not in got and "result" not in got
        if want["type"] == "tool.result":
            assert (got["ok"], got["result"]) == (want["ok"], want["result"]), got
            assert got["data"].get("fixture_miss", False) is want["missed"], got
        if want["type"] in ("approval.granted", "approval.revoked"):
            # Point 67: `data.attested_by` on every recorded grant and revocation.
            assert got["data"]["attested_by"] == want["data"]["attested_by"], got
            assert got.get("approved", True) == want.get("approved", True), got
    # What the agent was told (point 65's "reply" column).
    assert [r["type"] for r in run.replies[1:]] == [r["type"] for r in model.replies]
    for got, want in zip(run.replies[1:], model.replies, strict=True):
        assert got["call_id" if "call_id" in want else "approval_id"] == want.get("call_id", want.get("approval_id"))
        if want["type"] == "tool.denied":
            assert got["reason"].startswith(want["rule"] + ": ") and set(got) == {"type", "call_id", "reason"}
    # The post-run check (§8: "The post-run check still reports the attempt").
    trace = Trace(model.events)
    assert failing_seqs(run.report) == {r["id"]: [i + 1 for i in violations(trace, r)] for r in rules}
    passed = {r["rule_id"]: r["passed"] for r in run.report["results"]}
    assert passed == {r["id"]: not rule_fails(trace, r) for r in rules}
    # "record runs the ordinary check on the trace, so one evaluator serves live and recorded runs".
    check = cli("check", "--contract", str(folder / "c.json"), "--trace", str(folder / "t.jsonl"),
                "--format", "json", *[a for a in extra if a == "--no-lint"])
    checked = json.loads(check.stdout)
    for key in ("passed", "error_count", "warning_count", "results"):
        assert checked[key] == run.report[key], key
    return run


def message_at(run: Run, rule_id: str, seq: int) -> str:
    """The post-run report's message of `rule_id`'s violation at `seq` (v1 §14 D6: messages are prose,
    so the reason's text is compared with the report's, not with v1's wording)."""
    for result in run.report["results"]:
        for violation in result["violations"]:
            if result["rule_id"] == rule_id and violation.get("event_seq") == seq:
                return str(violation["message"])
    raise AssertionError(f"no {rule_id} violation at seq {seq}")


def reason_of(run: Run, rule_id: str, seq: int) -> str:
    """Point 75: the reason a denial at the call `seq` should carry."""
    return f"{rule_id}: {message_at(run, rule_id, seq)}"[:500]


# -- hand-written cases ---------------------------------------------------------------------------

def call(call_id: str, tool: str, args: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    message: dict[str, Any] = {"type": "tool.call", "call_id": call_id, "tool": tool}
    if args is not None:
        message["args"] = args
    return {**message, **extra}


DONE: dict[str, Any] = {"type": "run.completed"}
FIXTURES: dict[str, Any] = {"tools": {"get": {"paid": 10}, "refund": {"refund_id": "R1"},
                                      "send": {"sent": True}, "shell.run": {"code": 0}}}


def test_section8_example_enforced(cli: RunCli, tmp_path: Path) -> None:
    """§8 Example: with --enforce, the refund with no grant gets tool.denied from approval_bound."""
    rules = [{"id": "refund-approved", "kind": "approval_bound", "tool": "refund", "bind": "args_subset"}]
    messages = [call("c1", "get"), call("c2", "refund", {"order": "A9", "amount": 10}), DONE]
    run = compare(cli, tmp_path, rules, FIXTURES, messages)
    assert [e["type"] for e in run.trace] == ["run.start", "tool.call", "tool.result", "tool.call",
                                              "tool.denied", "run.completed"]
    assert run.trace[4]["reason"] == reason_of(run, "refund-approved", 4)
    assert run.result.returncode == 1
    # Point 75: "Each violation at a call that was answered by tool.denied gets prevented: true".
    assert run.report["results"][0]["violations"][0]["prevented"] is True


def test_section8_example_without_enforce(cli: RunCli, tmp_path: Path) -> None:
    """§8 Example: without --enforce the refund is answered, and check fails refund-approved at it."""
    rules = [{"id": "refund-approved", "kind": "approval_bound", "tool": "refund", "bind": "args_subset"}]
    messages = [call("c1", "get"), call("c2", "refund", {"order": "A9", "amount": 10}), DONE]
    run = record(cli, tmp_path, rules, FIXTURES, messages, enforce=False)
    assert [e["type"] for e in run.trace] == ["run.start", "tool.call", "tool.result", "tool.call",
                                              "tool.result", "run.completed"]
    assert failing_seqs(run.report) == {"refund-approved": [4]}
    assert run.result.returncode == 1
    assert "prevented" not in run.report["results"][0]["violations"][0]


def test_denied_event_fields(cli: RunCli, tmp_path: Path) -> None:
    """Point 65: `tool.denied {call_id, tool, reason, data: {rule_ids}}` and the reply
    `tool.denied {call_id, reason}`; v1 §4.1's message is the reason's text (point 75)."""
    rules = [{"id": "no-shell", "kind": "deny_tool", "tool": "shell.*"}]
    run = compare(cli, tmp_path, rules, FIXTURES, [call("c1", "shell.run", {"cmd": "ls"}), DONE])
    denied = run.trace[2]
    assert {k: denied[k] for k in ("type", "tool", "call_id", "reason", "data")} == {
        "type": "tool.denied", "tool": "shell.run", "call_id": "c1",
        "reason": reason_of(run, "no-shell", 2), "data": {"rule_ids": ["no-shell"]}}
    assert run.replies[1] == {"type": "tool.denied", "call_id": "c1", "reason": reason_of(run, "no-shell", 2)}


def test_allow_tools_denies_outside_list(cli: RunCli, tmp_path: Path) -> None:
    """Point 74 / v1 §4.2: a call outside the allowlist is denied, the one inside is answered."""
    rules = [{"id": "only-get", "kind": "allow_tools", "tools": ["get"]}]
    run = compare(cli, tmp_path, rules, FIXTURES, [call("c1", "get"), call("c2", "send"), DONE])
    assert run.trace[4]["reason"] == reason_of(run, "only-get", 4)


def test_require_approval_agent_grant_satisfies(cli: RunCli, tmp_path: Path) -> None:
    """Point 67: an agent-sent approval.granted satisfies require_approval (PASS); without it, FAIL."""
    rules = [{"id": "ask", "kind": "require_approval", "tool": "refund"}]
    grant = {"type": "approval.granted", "approval_id": "g1", "tool": "refund"}
    passed = compare(cli, tmp_path / "pass", rules, FIXTURES, [grant, call("c1", "refund"), DONE])
    assert passed.result.returncode == 0 and passed.trace[1]["data"] == {"attested_by": "agent"}
    failed = compare(cli, tmp_path / "fail", rules, FIXTURES, [call("c1", "refund"), DONE])
    assert failed.trace[2]["reason"] == reason_of(failed, "ask", 2)


def test_attested_by_harness_refuses_agent_grant(cli: RunCli, tmp_path: Path) -> None:
    """Point 67: `approval_bound` with `attested_by: ["harness"]` refuses an agent's own grant (FAIL)
    and accepts the harness grant an approval.request gets from the fixtures (PASS)."""
    rules = [{"id": "gate", "kind": "approval_bound", "tool": "refund", "attested_by": ["harness"]}]
    fixtures = {**FIXTURES, "approvals": [{"tool": "refund", "decision": "approve"}]}
    own = {"type": "approval.granted", "approval_id": "g1", "tool": "refund"}
    failed = compare(cli, tmp_path / "fail", rules, fixtures, [own, call("c1", "refund"), DONE])
    assert failed.trace[3]["type"] == "tool.denied"
    evidence = failed.report["results"][0]["violations"][0]["evidence"]
    assert evidence["rejected"] == [{"grant_seq": 2, "why": "attestation"}]
    request = {"type": "approval.request", "approval_id": "q1", "tool": "refund", "args": {"amount": 5}}
    passed = compare(cli, tmp_path / "pass", rules, fixtures, [request, call("c1", "refund"), DONE])
    assert passed.result.returncode == 0
    assert passed.trace[2]["data"]["attested_by"] == "harness"


def test_agent_cannot_forge_harness_attestation(cli: RunCli, tmp_path: Path) -> None:
    """Points 60 and 67: an agent's `data` is copied "with harness keys winning", so a grant whose
    data claims `attested_by: "harness"` is recorded as the agent's and refused (FAIL: denied)."""
    rules = [{"id": "gate", "kind": "approval_bound", "tool": "refund", "attested_by": ["harness"]}]
    forged = {"type": "approval.granted", "approval_id": "g1", "tool": "refund", "data": {"attested_by": "harness"}}
    run = record(cli, tmp_path, rules, FIXTURES, [forged, call("c1", "refund"), DONE])
    assert run.trace[1]["data"]["attested_by"] == "agent"
    assert run.trace[3]["type"] == "tool.denied" and run.result.returncode == 1


def test_revoked_grant_does_not_cover(cli: RunCli, tmp_path: Path) -> None:
    """§3.5 condition 7 / point 61: an agent's `approval.revoked` revokes the grant, so the call is
    denied (FAIL); the same script without the revocation passes."""
    rules = [{"id": "gate", "kind": "approval_bound", "tool": "refund"}]
    grant = {"type": "approval.granted", "approval_id": "g1", "tool": "refund"}
    revoke = {"type": "approval.revoked", "approval_id": "g1"}
    failed = compare(cli, tmp_path / "fail", rules, FIXTURES, [grant, revoke, call("c1", "refund"), DONE])
    assert failed.trace[4]["type"] == "tool.denied" and failed.trace[2]["data"] == {"attested_by": "agent"}
    passed = compare(cli, tmp_path / "pass", rules, FIXTURES, [grant, call("c1", "refund"), DONE])
    assert passed.result.returncode == 0


def test_require_approver_met_by_fixture_approver(cli: RunCli, tmp_path: Path) -> None:
    """§3.5 `require_approver` with point 64's `approver` copied from the approvals entry: the harness
    grant covers (PASS), an agent grant without an approver does not (FAIL: denied)."""
    rules = [{"id": "gate", "kind": "approval_bound", "tool": "refund", "require_approver": True}]
    fixtures = {**FIXTURES, "approvals": [{"tool": "refund", "decision": "approve", "approver": "lead"}]}
    request = {"type": "approval.request", "approval_id": "q1", "tool": "refund", "args": {}}
    passed = record(cli, tmp_path / "pass", rules, fixtures, [request, call("c1", "refund"), DONE])
    assert passed.trace[2]["approver"] == "lead" and passed.trace[4]["type"] == "tool.result"
    assert passed.result.returncode == 0
    grant = {"type": "approval.granted", "approval_id": "g1", "tool": "refund"}
    failed = record(cli, tmp_path / "fail", rules, fixtures, [grant, call("c1", "refund"), DONE])
    assert failed.trace[3]["type"] == "tool.denied"


def test_approval_bound_one_use_grant(cli: RunCli, tmp_path: Path) -> None:
    """§3.5 / point 75: one grant covers one call; the second call is denied (FAIL at the second)."""
    rules = [{"id": "gate", "kind": "approval_bound", "tool": "refund"}]
    grant = {"type": "approval.granted", "approval_id": "g1", "tool": "refund"}
    run = compare(cli, tmp_path, rules, FIXTURES, [grant, call("c1", "refund"), call("c2", "refund"), DONE])
    assert [e["type"] for e in run.trace[2:6]] == ["tool.call", "tool.result", "tool.call", "tool.denied"]


def test_approval_bound_reusable_grant(cli: RunCli, tmp_path: Path) -> None:
    """§3.5 `one_use: false`: the grant covers both calls (PASS)."""
    rules = [{"id": "gate", "kind": "approval_bound", "tool": "refund", "one_use": False}]
    grant = {"type": "approval.granted", "approval_id": "g1", "tool": "refund"}
    run = compare(cli, tmp_path, rules, FIXTURES, [grant, call("c1", "refund"), call("c2", "refund"), DONE])
    assert run.result.returncode == 0


def test_grant_consumed_by_call_another_rule_denies(cli: RunCli, tmp_path: Path) -> None:
    """Points 21 and 75: "a covered call that a later tool.denied marks still consumes its grant".
    c1 (amount 10) is denied by `small`, yet uses up the nearest grant g2; c2 then uses g1, and c3
    finds no grant left and is denied by `gate` (were c1's grant not consumed, c3 would pass)."""
    rules: list[Rule] = [{"id": "gate", "kind": "approval_bound", "tool": "refund"},
                         {"id": "small", "kind": "tool_args", "tool": "refund", "match": {"amount": {"$lte": 5}}}]
    grants: list[dict[str, Any]] = [{"type": "approval.granted", "approval_id": g, "tool": "refund"}
                                    for g in ("g1", "g2")]
    messages = [*grants, call("c1", "refund", {"amount": 10}), call("c2", "refund", {"amount": 1}),
                call("c3", "refund", {"amount": 1}), DONE]
    run = compare(cli, tmp_path, rules, FIXTURES, messages)
    assert [e["type"] for e in run.trace[4:9]] == ["tool.denied", "tool.call", "tool.result", "tool.call",
                                                   "tool.denied"]
    assert run.trace[4]["data"]["rule_ids"] == ["small"] and run.trace[8]["data"]["rule_ids"] == ["gate"]


def test_tool_calls_max_denies_every_call_beyond(cli: RunCli, tmp_path: Path) -> None:
    """Point 74: tool_calls.max denies *every* call beyond the bound, not only the (max+1)-th;
    the post-run check has one violation, at the (max+1)-th call (point 20)."""
    rules = [{"id": "two-sends", "kind": "tool_calls", "tool": "send", "max": 2}]
    messages = [call(f"c{i}", "send") for i in range(1, 5)] + [DONE]
    run = compare(cli, tmp_path, rules, FIXTURES, messages)
    assert [e["type"] for e in run.trace[1:9]] == ["tool.call", "tool.result"] * 2 + ["tool.call", "tool.denied"] * 2
    assert failing_seqs(run.report) == {"two-sends": [6]}


def test_tool_calls_max_zero(cli: RunCli, tmp_path: Path) -> None:
    """§3.4: `max: 0` alone is valid; the first call is denied (FAIL); other tools pass."""
    rules = [{"id": "never", "kind": "tool_calls", "tool": "send", "max": 0}]
    run = compare(cli, tmp_path, rules, FIXTURES, [call("c1", "get"), call("c2", "send"), DONE])
    assert run.trace[4]["type"] == "tool.denied"


def test_tool_calls_successful_counts_earlier_successes(cli: RunCli, tmp_path: Path) -> None:
    """Point 74: under count: successful a call is denied once the earlier successful calls reach
    max; a failed call does not count."""
    fixtures = {"tools": {"send": {"$cases": [{"call_index": 0, "ok": False}, {"result": {"sent": True}}]}}}
    rules = [{"id": "one-ok", "kind": "tool_calls", "tool": "send", "max": 1, "count": "successful"}]
    messages = [call("c1", "send"), call("c2", "send"), call("c3", "send"), DONE]
    run = record(cli, tmp_path, rules, fixtures, messages)
    assert [e["type"] for e in run.trace[1:7]] == ["tool.call", "tool.result", "tool.call", "tool.result",
                                                   "tool.call", "tool.denied"]
    assert run.trace[6]["data"]["rule_ids"] == ["one-ok"]
    # Ambiguous, so not asserted: the denied call has no result, so it is not a counted call, the
    # ordinary evaluator (point 20) finds one success and the rule passes; the product then exits 0
    # (point 83) although §8 says "the post-run check still reports the attempt" and point 84 treats
    # "a call was denied" as a safety failure. Only the record section's count says so.
    assert run.report["record"]["denied"] == 1


def test_retry_limit_denies_every_attempt_beyond(cli: RunCli, tmp_path: Path) -> None:
    """Point 74: retry_limit denies every call beyond max_attempts, per group (call_signature)."""
    rules = [{"id": "retries", "kind": "retry_limit", "max_attempts": 1}]
    messages = [call("c1", "get", call_signature="a"), call("c2", "get", call_signature="b"),
                call("c3", "get", call_signature="a"), call("c4", "get", call_signature="a"), DONE]
    run = compare(cli, tmp_path, rules, FIXTURES, messages)
    assert [e["type"] for e in run.trace[5:9]] == ["tool.call", "tool.denied", "tool.call", "tool.denied"]


def test_stop_is_final_denies_call_after_stop(cli: RunCli, tmp_path: Path) -> None:
    """Points 61 and 75: the agent may send control.stop; a later call is denied, and the
    tool.denied after the stop is itself flagged by stop_is_final in the post-run check."""
    rules = [{"id": "final", "kind": "stop_is_final"}]
    messages = [call("c1", "get"), {"type": "control.stop"}, call("c2", "get"), DONE]
    run = compare(cli, tmp_path, rules, FIXTURES, messages)
    assert run.trace[5]["reason"] == reason_of(run, "final", 5)
    assert failing_seqs(run.report) == {"final": [5, 6]}


def test_stop_is_final_allowing_calls_denies_nothing(cli: RunCli, tmp_path: Path) -> None:
    """Point 74: only a violation *at the call* denies; with tool.call allowed after a stop the call is
    answered, and the check flags the result (FAIL, nothing denied)."""
    rules = [{"id": "final", "kind": "stop_is_final", "allowed_after": ["tool.call", "run.completed"]}]
    run = compare(cli, tmp_path, rules, FIXTURES, [{"type": "control.stop"}, call("c1", "get"), DONE])
    assert run.trace[3]["type"] == "tool.result"


def test_tool_args_with_from_result_enforced(cli: RunCli, tmp_path: Path) -> None:
    """Point 74: tool_args without $from_output is enforced; §3.1's example (mismatch, unresolved)."""
    fixtures = {"tools": {"get": {"$cases": [{"args": {"id": "A9"}, "result": {"paid": 10}}]},
                          "refund": {"refund_id": "R1"}}}
    rules = [{"id": "refund-args", "kind": "tool_args", "tool": "refund",
              "match": {"order": {"$regex": "^A[0-9]+$"},
                        "amount": {"$from_result": {"tool": "get", "path": "paid",
                                                    "where": {"id": {"$arg": "order"}}}}}}]
    messages = [call("c1", "get", {"id": "A9"}), call("c2", "refund", {"order": "A9", "amount": 12}),
                call("c3", "refund", {"order": "A7", "amount": 5}), call("c4", "refund", {"order": "A9", "amount": 10}),
                DONE]
    run = record(cli, tmp_path, rules, fixtures, messages)
    assert [e["type"] for e in run.trace if e["type"] in ("tool.result", "tool.denied")] == [
        "tool.result", "tool.denied", "tool.denied", "tool.result"]
    assert failing_seqs(run.report) == {"refund-args": [4, 6]}


def test_tool_args_with_from_output_not_enforced(cli: RunCli, tmp_path: Path) -> None:
    """Point 74: "neither is a tool_args rule that contains $from_output anywhere": the call is
    answered, and the post-run check still fails it."""
    rules = [{"id": "from-out", "kind": "tool_args", "tool": "send", "match": {"to": {"$from_output": "to"}}}]
    done = {"type": "run.completed", "output": {"to": "bob"}}
    run = record(cli, tmp_path, rules, FIXTURES, [call("c1", "send", {"to": "eve"}), done], "--no-lint")
    assert [e["type"] for e in run.trace] == ["run.start", "tool.call", "tool.result", "run.completed"]
    assert failing_seqs(run.report) == {"from-out": [2]} and run.result.returncode == 1


def test_tool_args_call_index_enforced(cli: RunCli, tmp_path: Path) -> None:
    """Point 74: tool_args rules with call_index are enforced: only the k-th call is checked."""
    rules = [{"id": "second", "kind": "tool_args", "tool": "send", "call_index": 1, "match": {"to": "bob"}}]
    messages = [*(call(f"c{i}", "send", {"to": "eve"}) for i in (1, 2, 3)), DONE]
    run = compare(cli, tmp_path, rules, FIXTURES, messages)
    assert [e["type"] for e in run.trace[2::2][:3]] == ["tool.result", "tool.denied", "tool.result"]


def test_tool_args_call_without_args_denied(cli: RunCli, tmp_path: Path) -> None:
    """§3.1 `args_missing` (unresolved) is a violation at the call, so point 74 denies it."""
    rules = [{"id": "args", "kind": "tool_args", "tool": "send", "match": {"to": "bob"}}]
    run = compare(cli, tmp_path, rules, FIXTURES, [call("c1", "send"), call("c2", "send", {"to": "bob"}), DONE])
    assert run.trace[2]["type"] == "tool.denied" and run.trace[4]["type"] == "tool.result"


def test_warning_rules_never_enforced(cli: RunCli, tmp_path: Path) -> None:
    """Point 74: "Warning rules are never enforced": the call is answered, the check warns, exit 0."""
    rules = [{"id": "soft", "kind": "deny_tool", "tool": "send", "severity": "warning"}]
    run = compare(cli, tmp_path, rules, FIXTURES, [call("c1", "send"), DONE])
    assert run.trace[2]["type"] == "tool.result"
    assert (run.report["warning_count"], run.result.returncode) == (1, 0)


def test_reason_names_first_rule_and_rule_ids_all(cli: RunCli, tmp_path: Path) -> None:
    """Point 75: the reason is the first firing rule's in contract order; data.rule_ids lists every
    firing rule (and a warning rule, never enforced, is not among them)."""
    rules: list[Rule] = [{"id": "w", "kind": "deny_tool", "tool": "send", "severity": "warning"},
             {"id": "b", "kind": "allow_tools", "tools": ["get"]},
             {"id": "a", "kind": "deny_tool", "tool": "s*"}]
    run = compare(cli, tmp_path, rules, FIXTURES, [call("c1", "send"), DONE])
    assert run.trace[2]["reason"] == reason_of(run, "b", 2)
    assert run.trace[2]["data"]["rule_ids"] == ["b", "a"]


def test_reason_cut_to_500_code_points(cli: RunCli, tmp_path: Path) -> None:
    """Point 75: the reason is cut to 500 code points."""
    tool = "é" * 490
    rules = [{"id": "no-e", "kind": "deny_tool", "tool": "é*"}]
    run = record(cli, tmp_path, rules, {"tools": {}}, [call("c1", tool), DONE])
    reason = run.trace[2]["reason"]
    assert len(reason) == 500 and reason == reason_of(run, "no-e", 2)


def test_denied_call_counts_for_call_index(cli: RunCli, tmp_path: Path) -> None:
    """Points 70 and 75: a denied call counts toward the fixtures' call_index."""
    cases = [{"call_index": 0, "result": "first"}, {"call_index": 1, "result": "second"}, {"result": "later"}]
    fixtures = {"tools": {"send": {"$cases": cases}}}
    rules = [{"id": "not-bob", "kind": "tool_args", "tool": "send", "match": {"to": {"$in": ["eve"]}}}]
    messages = [call("c1", "send", {"to": "bob"}), call("c2", "send", {"to": "eve"}), DONE]
    run = compare(cli, tmp_path, rules, fixtures, messages)
    assert run.trace[4]["result"] == "second"


def test_require_order_and_deny_event_enforced(cli: RunCli, tmp_path: Path) -> None:
    """Point 74: require_order and deny_event are enforced too (FAIL: denied; PASS: answered)."""
    rules = [{"id": "get-first", "kind": "require_order", "before": {"type": "tool.call", "tool": "get"},
              "after": {"type": "tool.call", "tool": "refund"}},
             {"id": "no-send", "kind": "deny_event", "match": {"type": "tool.call", "tool": "send"}}]
    messages = [call("c1", "refund"), call("c2", "send"), call("c3", "get"), call("c4", "refund"), DONE]
    run = record(cli, tmp_path, rules, FIXTURES, messages)
    assert [e["type"] for e in run.trace[2:9:2]] == ["tool.denied", "tool.denied", "tool.result", "tool.result"]
    assert run.trace[2]["data"]["rule_ids"] == ["get-first"] and run.trace[4]["data"]["rule_ids"] == ["no-send"]


def test_precedence_enforced(cli: RunCli, tmp_path: Path) -> None:
    """Point 74: precedence whose `after` is the call is enforced (§3.3's example: `late` at seq 3)."""
    rules = [{"id": "lookup-first", "kind": "precedence", "before": {"type": "tool.result", "tool": "get", "ok": True},
              "after": {"type": "tool.call", "tool": "refund"}, "correlate": [{"before": "id", "after": "order"}]}]
    messages = [call("c1", "get", {"id": "A1"}), call("c2", "refund", {"order": "B2"}),
                call("c3", "get", {"id": "B2"}), call("c4", "refund", {"order": "B2"}), DONE]
    run = record(cli, tmp_path, rules, FIXTURES, messages)
    assert [e["type"] for e in run.trace[2:9:2]] == ["tool.result", "tool.denied", "tool.result", "tool.result"]


def test_liveness_rule_not_enforced(cli: RunCli, tmp_path: Path) -> None:
    """Point 74: only safety kinds deny: tool_result_required (liveness, point 82) never does."""
    rules = [{"id": "results", "kind": "tool_result_required"}, {"id": "no-send", "kind": "deny_tool", "tool": "send"}]
    run = record(cli, tmp_path, rules, FIXTURES, [call("c1", "get"), call("c2", "send"), DONE])
    assert run.trace[4]["data"]["rule_ids"] == ["no-send"]
    # Point 75: "tool_result_required flags a denied call".
    assert failing_seqs(run.report)["results"] == [4]


def test_every_violation_at_a_denied_call_is_prevented(cli: RunCli, tmp_path: Path) -> None:
    """Point 75: "Each violation at a call that was answered by tool.denied gets prevented: true",
    whichever rule it comes from (a warning rule, a liveness rule); only error rules deny."""
    rules = [{"id": "w", "kind": "deny_tool", "tool": "send", "severity": "warning"},
             {"id": "e", "kind": "deny_tool", "tool": "send"}, {"id": "results", "kind": "tool_result_required"}]
    run = record(cli, tmp_path, rules, FIXTURES, [call("c1", "send"), DONE])
    assert run.trace[2]["data"]["rule_ids"] == ["e"]
    assert [v.get("prevented") for v in run.report["violations"]] == [True, True, True]


def test_event_budget_never_denies(cli: RunCli, tmp_path: Path) -> None:
    """Point 74 denies only for a violation *at the call*; event_budget's violations have no seq
    (v1 §4.8), so the second call is answered and only the post-run check fails (exit 1)."""
    rules = [{"id": "budget", "kind": "event_budget", "max_tool_calls": 1}]
    run = record(cli, tmp_path, rules, FIXTURES, [call("c1", "get"), call("c2", "get"), DONE])
    assert [e["type"] for e in run.trace] == ["run.start", "tool.call", "tool.result", "tool.call", "tool.result",
                                              "run.completed"]
    assert run.report["passed"] is False and run.result.returncode == 1


def test_safety_exit_after_denial(cli: RunCli, tmp_path: Path) -> None:
    """Point 84: with --safety-exit N, a run in which a call was denied exits N."""
    rules = [{"id": "no-send", "kind": "deny_tool", "tool": "send"}]
    run = record(cli, tmp_path, rules, FIXTURES, [call("c1", "send"), DONE], "--safety-exit", "9")
    assert run.result.returncode == 9


def test_fixture_miss_with_denial_exit_1(cli: RunCli, tmp_path: Path) -> None:
    """Point 72/83: a miss makes a passing run exit 2, but the check's exit 1 still wins."""
    rules = [{"id": "no-send", "kind": "deny_tool", "tool": "send"}]
    missed = compare(cli, tmp_path / "a", rules, {"tools": {}}, [call("c1", "get"), DONE])
    assert missed.result.returncode == 2
    both = compare(cli, tmp_path / "b", rules, {"tools": {}}, [call("c1", "get"), call("c2", "send"), DONE])
    assert both.result.returncode == 1


def test_denied_approval_request_does_not_cover(cli: RunCli, tmp_path: Path) -> None:
    """Point 64: a request the fixtures deny is recorded with approved: false, which covers nothing."""
    rules = [{"id": "gate", "kind": "approval_bound", "tool": "refund"}]
    fixtures = {**FIXTURES, "approvals": [{"tool": "refund", "decision": "deny"}]}
    request = {"type": "approval.request", "approval_id": "q1", "tool": "refund", "args": {}}
    run = compare(cli, tmp_path, rules, fixtures, [request, call("c1", "refund"), DONE])
    assert run.trace[2]["approved"] is False and run.trace[4]["type"] == "tool.denied"
    assert run.replies[1] == {"type": "approval.decision", "approval_id": "q1", "approved": False}


def test_bad_contract_exit_2_one_line(cli: RunCli, tmp_path: Path) -> None:
    """Point 83: "Exit 2 before spawning on any invalid input": one stderr line, no trace written."""
    rules = [{"id": "x", "kind": "deny_tool"}]
    run = record(cli, tmp_path, rules, FIXTURES, [DONE])
    assert run.result.returncode == 2 and run.result.stdout == "" and run.trace == []
    assert len(run.result.stderr.strip().splitlines()) == 1


def test_bad_fixtures_exit_2_one_line(cli: RunCli, tmp_path: Path) -> None:
    """Point 69: unknown fixture keys exit 2 before spawning, naming the path."""
    rules = [{"id": "no-send", "kind": "deny_tool", "tool": "send"}]
    run = record(cli, tmp_path, rules, {"tools": {"send": {"$cases": [{"okay": True}]}}}, [DONE])
    assert run.result.returncode == 2 and run.trace == []
    lines = run.result.stderr.strip().splitlines()
    assert len(lines) == 1 and "$.tools.send.$cases[0]" in lines[0]


# -- the property test --------------------------------------------------------------------------

TOOLS = ["get", "refund", "send", "shell.run"]
GLOBS = TOOLS + ["s*", "*.run", "re*"]
ARGS: list[dict[str, Any] | None] = [None, {}, {"id": "A"}, {"id": "B", "amount": 5}, {"amount": 10},
                                     {"id": "A", "amount": 10}]
NODES: list[Any] = ["A", {"$in": ["A", "B"]}, {"$lte": 5}, 10,
                    {"$from_result": {"tool": "get", "path": "v"}}, {"$from_result": {"tool": "send", "path": "v"}}]
FIXTURE_CHOICES: list[Any] = [
    None,
    {"v": "A"},
    {"v": 10},
    {"$cases": [{"call_index": 0, "ok": False, "result": {"v": "B"}}, {"result": {"v": "A"}}]},
    {"$cases": [{"args": {"id": "A"}, "result": {"v": 5}}, {"ok": False}]},
]
APPROVALS: list[list[dict[str, Any]]] = [
    [],
    [{"tool": "refund", "decision": "approve", "approval_scope": "pay"}, {"tool": "*", "decision": "deny"}],
    [{"tool": "*", "args": {"amount": {"$lte": 5}}, "decision": "approve"}, {"tool": "s*", "decision": "approve"}],
]


@st.composite
def rules_strategy(draw: st.DrawFn) -> list[Rule]:
    rules: list[Rule] = []
    for n in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(sorted(ENFORCED_KINDS)))
        rule: Rule = {"id": f"r{n}", "kind": kind}
        if draw(st.integers(0, 3)) == 0:
            rule["severity"] = "warning"
        tool = draw(st.sampled_from(GLOBS))
        if kind == "deny_tool":
            rule["tool"] = tool
        elif kind == "allow_tools":
            rule["tools"] = draw(st.lists(st.sampled_from(GLOBS), min_size=1, max_size=3, unique=True))
        elif kind == "require_approval":
            rule["tool"] = tool
            if draw(st.booleans()):
                rule["scope"] = draw(st.sampled_from(["pay", "p*"]))
            if draw(st.booleans()):
                rule["within_events"] = draw(st.integers(1, 6))
        elif kind == "approval_bound":
            rule["tool"] = tool
            if draw(st.booleans()):
                rule["scope"] = draw(st.sampled_from(["pay", "p*"]))
            if draw(st.booleans()):
                rule["one_use"] = draw(st.booleans())
            rule["bind"] = draw(st.sampled_from(["none", "args", "args_subset", "call_id"]))
            if draw(st.booleans()):
                rule["attested_by"] = draw(st.sampled_from([["harness"], ["agent"], ["*"]]))
        elif kind == "tool_calls":
            rule.update(tool=tool, max=draw(st.integers(0, 2)))
            if draw(st.booleans()):
                # `count: successful` is left out: a call it denies leaves no violation in the trace,
                # and what the check and the exit should then say is ambiguous (see
                # test_tool_calls_successful_counts_earlier_successes).
                rule["count"] = "calls"
        elif kind == "retry_limit":
            if draw(st.booleans()):
                rule["tool"] = tool
            rule["max_attempts"] = draw(st.integers(1, 2))
            if draw(st.booleans()):
                rule["group_by"] = draw(st.sampled_from(["tool", "call_signature"]))
        elif kind == "stop_is_final":
            allowed = draw(st.sampled_from([None, ["run.completed", "tool.call"], ["run.completed", "tool.*"]]))
            if allowed is not None:
                rule["allowed_after"] = allowed
            if draw(st.booleans()):
                rule["reasons"] = ["user*"]
        elif kind == "deny_event":
            rule["match"] = {**draw(st.sampled_from([{"type": "tool.call"}, {"type": "tool.*"}, {}])), "tool": tool}
        elif kind == "require_order":
            rule["before"] = draw(st.sampled_from([{"type": "tool.result", "tool": "get", "ok": True}, {"tool": "get"},
                                                   {"type": "approval.granted"}]))
            rule["after"] = {**draw(st.sampled_from([{"type": "tool.call"}, {}])), "tool": tool}
        elif kind == "tool_args":
            rule["tool"] = tool
            keys = draw(st.lists(st.sampled_from(["id", "amount"]), min_size=1, max_size=2, unique=True))
            rule["match"] = {k: draw(st.sampled_from(NODES)) for k in keys}
            if draw(st.integers(0, 3)) == 0:
                rule["call_index"] = draw(st.integers(0, 2))
        rules.append(rule)
    return rules


@st.composite
def messages_strategy(draw: st.DrawFn) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    calls = 0
    n_calls = draw(st.integers(1, 8))
    stops = 0
    grant_ids: list[str] = []
    while calls < n_calls:
        choice = draw(st.integers(0, 9))
        if choice == 0 and stops == 0:
            stops += 1
            stop: dict[str, Any] = {"type": "control.stop"}
            reason = draw(st.sampled_from([None, "user cancel", "budget"]))
            if reason is not None:
                stop["reason"] = reason
            messages.append(stop)
        elif choice == 1:
            gid = f"g{len(grant_ids) + 1}"
            grant_ids.append(gid)
            grant: dict[str, Any] = {"type": "approval.granted", "approval_id": gid}
            if draw(st.booleans()):
                grant["tool"] = draw(st.sampled_from(TOOLS))
            if draw(st.booleans()):
                grant["approval_scope"] = "pay"
            args = draw(st.sampled_from(ARGS))
            if args is not None:
                grant["args"] = args
            if draw(st.booleans()):
                grant["call_id"] = f"c{calls + 1}"
            if grant_ids[:-1] and draw(st.integers(0, 3)) == 0:
                grant.update(approval_id=draw(st.sampled_from(grant_ids[:-1])), approved=False)
            messages.append(grant)
        elif choice == 2:
            qid = f"q{len(grant_ids) + 1}"
            grant_ids.append(qid)
            messages.append({"type": "approval.request", "approval_id": qid, "tool": draw(st.sampled_from(TOOLS)),
                             "args": draw(st.sampled_from([a for a in ARGS if a is not None]))})
        elif choice == 3 and grant_ids:
            revoke: dict[str, Any] = {"type": "approval.revoked"}
            which = draw(st.sampled_from(["approval_id", "tool", "none"]))
            if which == "approval_id":
                revoke["approval_id"] = draw(st.sampled_from(grant_ids))
            elif which == "tool":
                revoke["tool"] = draw(st.sampled_from(TOOLS))
            messages.append(revoke)
        else:
            calls += 1
            message = call(f"c{calls}", draw(st.sampled_from(TOOLS)), draw(st.sampled_from(ARGS)))
            if draw(st.integers(0, 2)) == 0:
                message["call_signature"] = draw(st.sampled_from(["s1", "s2"]))
            if grant_ids and draw(st.integers(0, 3)) == 0:
                message["approval_id"] = draw(st.sampled_from(grant_ids))
            messages.append(message)
    return [*messages, DONE]


@st.composite
def fixtures_strategy(draw: st.DrawFn) -> dict[str, Any]:
    tools = {}
    for tool in TOOLS:
        fixture = draw(st.sampled_from(FIXTURE_CHOICES))
        if fixture is not None:
            tools[tool] = fixture
    return {"tools": tools, "approvals": draw(st.sampled_from(APPROVALS))}


@settings(max_examples=examples(30), derandomize=True, deadline=None, suppress_health_check=list(HealthCheck))
@given(rules=rules_strategy(), fixtures=fixtures_strategy(), messages=messages_strategy())
@example(  # a stop with a reason, a call after it, a second rule firing with stop_is_final
    rules=[{"id": "r0", "kind": "stop_is_final", "reasons": ["user*"]},
           {"id": "r1", "kind": "tool_calls", "tool": "s*", "max": 1}],
    fixtures={"tools": {"send": {"v": "A"}}, "approvals": []},
    messages=[call("c1", "send"), {"type": "control.stop", "reason": "user cancel"}, call("c2", "send"),
              call("c3", "get"), DONE])
def test_enforce_matches_model(cli: RunCli, tmp_path: Path, rules: list[Rule], fixtures: dict[str, Any],
                               messages: list[dict[str, Any]]) -> None:
    """Point 74 and 75 on random contracts of the enforced kinds, mixed severities, and random agent
    scripts: which calls are denied (and by which rules), the trace's events, the replies, the
    post-run verdict (also equal to `check` of the trace), and the exit code (point 83)."""
    folder = tmp_path / f"run{len(list(tmp_path.iterdir()))}"
    compare(cli, folder, rules, fixtures, messages, "--no-lint")
