"""`agent-invariants mutate`, tested from the spec's words alone: v2-extensions.md §6 and the binding
resolutions of §10 "mutate (§6)", points 56-66 (which win where they differ from §6), with §3 and
v1-semantics.md §4 for the rule kinds the contracts below use to kill mutants.

Written without reading the implementation: every mutant id, mutant event, status, `killed_by`, count
and exit code below comes from that text. Most tests call the library in this process
(`mutate_trace`, and `mutant_text` for the events of one mutant) on files in tmp_path; a few run
`python -m agent_invariants mutate … --format json` for exit codes and stderr.

Conventions the spec fixes and the expectations rely on:
- candidates are ordered by site position, then the operator's row in §6's table (operators sharing
  a row in the order the row lists them), then the detail (point 61);
- ids carry the site's seq *in the input trace*; mutants are renumbered 10, 20, … (points 59, 61);
- moving operators keep the times by position, drop operators keep each event's own time, inserted
  events copy the time of the event before them (point 59);
- `killed_by` lists rule ids in contract order; a survivor's hint is its operator's "killed by" cell
  (point 66; compared here without markdown backticks).
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import msgspec
import pytest

from agent_invariants.errors import InputError
from agent_invariants.mutate import mutant_text, mutate_trace

SCHEMA = "agent-invariants/mutate/v1"
STATUSES = ("killed", "survived", "equivalent", "invalid")

# §6's table: each operator's "killed by" cell, which point 66 makes the survivor's hint.
CELLS = {
    "drop_call": "tool_order, tool_calls, precedence, required_when",
    "drop_event": "require_event, require_order, failure_handled",
    "swap_calls": "tool_order, precedence",
    "change_arg": "tool_args",
    "duplicate_call": "tool_calls, distinct, retry_limit",
    "drop_approval": "require_approval, approval_bound",
    "move_approval_after": "require_approval, approval_bound",
    "rebind_approval": "require_approval, approval_bound",
    "stop_earlier": "stop_is_final",
    "flip_ok": "failure_handled, `successful` counts",
    "drop_outcome": "completion rules, conditions",
    "degrade_outcome": "completion rules, conditions",
    "inflate_retries": "retry_limit, event_budget",
    "stale_result": "`$from_result` rules",
    "misreport_output": "output_match, output length",
    "inflate_duration": "latency and run budgets",
}


# -- helpers: events ----------------------------------------------------------------------------

def ts(i: int) -> str:
    """A distinct UTC time per position."""
    return f"2026-01-01T10:{i // 60:02d}:{i % 60:02d}Z"


def call(tool: str | None, call_id: str | None = None, args: dict[str, Any] | None = None,
         **extra: Any) -> dict[str, Any]:
    event: dict[str, Any] = {"type": "tool.call"}
    if tool is not None:
        event["tool"] = tool
    if call_id is not None:
        event["call_id"] = call_id
    if args is not None:
        event["args"] = args
    return {**event, **extra}


def result(call_id: str, ok: bool | None = True, **extra: Any) -> dict[str, Any]:
    event: dict[str, Any] = {"type": "tool.result", "call_id": call_id}
    if ok is not None:
        event["ok"] = ok
    return {**event, **extra}


def ev(kind: str, **extra: Any) -> dict[str, Any]:
    return {"type": kind, **extra}


def timed(*specs: dict[str, Any], step: int = 10) -> list[dict[str, Any]]:
    """Events with seq step, 2·step, … and time ts(position)."""
    return [{"seq": step * (i + 1), "time": ts(i), **spec} for i, spec in enumerate(specs)]


def numbered(*specs: dict[str, Any], step: int = 10) -> list[dict[str, Any]]:
    """Events with seq step, 2·step, … and no time."""
    return [{"seq": step * (i + 1), **spec} for i, spec in enumerate(specs)]


def renumbered(evs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Point 59: every mutant gets seq 10, 20, … by position; everything else stays."""
    return [{**e, "seq": 10 * (i + 1)} for i, e in enumerate(evs)]


def moved(original: list[dict[str, Any]], order: list[int]) -> list[dict[str, Any]]:
    """Point 59 for the moving operators: position i holds the content of original[order[i]], with
    the time of original[i] (content moves, times do not), and seq 10·(i+1)."""
    out = []
    for position, source in enumerate(order):
        event = {**original[source], "seq": 10 * (position + 1)}
        event.pop("time", None)
        if "time" in original[position]:
            event["time"] = original[position]["time"]
        out.append(event)
    return out


def jsonl(evs: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(e) + "\n" for e in evs)


def sha256_file(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# -- helpers: contracts, runs, reports ------------------------------------------------------------

def rule(rule_id: str, kind: str, **fields: Any) -> dict[str, Any]:
    return {"id": rule_id, "kind": kind, **fields}


def write_case(folder: Path, rules: list[dict[str, Any]], evs: list[dict[str, Any]],
               version: int = 2, name: str = "mutate-spec") -> Path:
    """`c.json` (the contract) and `t.jsonl` (the trace) in `folder`; returns `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "c.json").write_text(json.dumps({"version": version, "name": name, "rules": rules}, indent=1),
                                   encoding="utf-8")
    (folder / "t.jsonl").write_text(jsonl(evs), encoding="utf-8")
    return folder


def mutate(folder: Path, **options: Any) -> dict[str, Any]:
    """`mutate_trace` on the folder's c.json and t.jsonl, as plain data checked against point 66."""
    report: dict[str, Any] = msgspec.to_builtins(mutate_trace(folder / "c.json", folder / "t.jsonl", **options))
    check_report_form(report)
    return report


def mutant(folder: Path, ident: str) -> list[dict[str, Any]]:
    """The events of one mutant (`mutant_text`)."""
    text = mutant_text(folder / "c.json", folder / "t.jsonl", ident).decode("utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def ids(report: dict[str, Any], *operators: str) -> list[str]:
    """The mutant ids of the report in order (only those of `operators` when given)."""
    return [m["id"] for m in report["mutants"] if not operators or m["operator"] in operators]


def entry(report: dict[str, Any], ident: str) -> dict[str, Any]:
    found: list[dict[str, Any]] = [m for m in report["mutants"] if m["id"] == ident]
    assert len(found) == 1, (ident, ids(report))
    return found[0]


def outcome_of(report: dict[str, Any], ident: str) -> tuple[str, list[str]]:
    """(status, killed_by) of one mutant."""
    m = entry(report, ident)
    return m["status"], m["killed_by"]


def plain(text: str) -> str:
    return text.replace("`", "")


def check_report_form(report: dict[str, Any]) -> None:
    """Point 66: the keys of the report and of its parts, and counts that agree with the list
    (points 63, 64, 66)."""
    assert set(report) - {"trace"} == {
        "schema", "contract_sha256", "trace_sha256", "score", "killed", "survived", "warned", "equivalent",
        "over_block", "invalid", "mutants", "survivors", "control", "false_positives"}
    assert report["schema"] == SCHEMA
    mutants = report["mutants"]
    for m in mutants:
        assert {"id", "operator", "status", "killed_by"} <= set(m) <= {
            "id", "operator", "status", "killed_by", "warned", "over_block"}, m
        assert m["status"] in STATUSES, m
        assert m["id"].split(":")[0] == m["operator"], m
        if m["status"] == "killed":
            assert m["killed_by"], m
        elif m["status"] in ("survived", "invalid") or not m.get("over_block"):
            assert m["killed_by"] == [], m
        if m.get("warned"):
            assert m["status"] == "survived", m
        if m.get("over_block"):
            assert m["status"] == "equivalent", m
    assert len(set(ids(report))) == len(mutants), "mutant ids must be unique"
    count = {s: sum(m["status"] == s for m in mutants) for s in STATUSES}
    assert (report["killed"], report["survived"], report["equivalent"], report["invalid"]) == (
        count["killed"], count["survived"], count["equivalent"], count["invalid"])
    assert report["warned"] == sum(bool(m.get("warned")) for m in mutants)
    assert report["over_block"] == sum(bool(m.get("over_block")) for m in mutants)
    scored = report["killed"] + report["survived"]
    assert report["score"] == (None if scored == 0 else pytest.approx(report["killed"] / scored))
    survivors = [m for m in mutants if m["status"] == "survived"]
    assert [s["id"] for s in report["survivors"]] == [m["id"] for m in survivors]
    for s, m in zip(report["survivors"], survivors, strict=True):
        assert set(s) == {"id", "hint"}
        assert plain(s["hint"]) == plain(CELLS[m["operator"]]), s
    control = report["control"]
    assert set(control) == {"auto", "contract_sha256", "score", "killed", "survived", "too_easy"}
    assert control["killed"] + control["survived"] == scored, "the control is scored on the same mutants"
    c_scored = control["killed"] + control["survived"]
    assert control["score"] == (None if c_scored == 0 else pytest.approx(control["killed"] / c_scored))
    for fp in report["false_positives"]:
        assert {"rewrite", "killed_by"} <= set(fp) <= {"rewrite", "file", "killed_by"}, fp


# -- §6's example ---------------------------------------------------------------------------------

def example(folder: Path) -> Path:
    """§6's example: `approval_bound` on refund; grant (10), refund call (20), result (30), run.completed (40).
    The call carries no approval_id, so the grant (which has one) has no "own call" (point 57)."""
    return write_case(folder, [rule("refund-approved", "approval_bound", tool="refund")], numbered(
        ev("approval.granted", approval_id="g1", tool="refund"),
        call("refund", "c1", {"order": "A1"}),
        result("c1"),
        ev("run.completed")))


EXAMPLE_IDS = ["drop_approval:10", "drop_call:20", "change_arg:20:/order", "duplicate_call:20",
               "inflate_retries:20", "flip_ok:30", "drop_event:40"]


def auto_control(name: str, status: str, tools: list[str]) -> dict[str, Any]:
    """Point 64's auto control, written out."""
    rules = [rule("control.status", "run_status", equals=status)]
    rules += [rule(f"control.calls.{k}", "tool_calls", tool=t, min=1) for k, t in enumerate(tools, 1)]
    return {"version": 2, "name": f"{name} (control)", "rules": rules}


def test_section6_example_drop_approval_killed_flip_ok_survives_with_its_hint(tmp_path: Path) -> None:
    """§6 example, points 57, 61, 63, 66: drop_approval:10 is killed by the approval_bound rule,
    flip_ok:30 survives and its hint is the flip_ok row's cell (which names failure_handled)."""
    report = mutate(example(tmp_path))
    assert ids(report) == EXAMPLE_IDS
    assert outcome_of(report, "drop_approval:10") == ("killed", ["refund-approved"])
    assert outcome_of(report, "duplicate_call:20") == ("killed", ["refund-approved"])      # one_use
    assert outcome_of(report, "inflate_retries:20") == ("killed", ["refund-approved"])     # copies consume it
    assert outcome_of(report, "flip_ok:30") == ("survived", [])
    hints = {s["id"]: s["hint"] for s in report["survivors"]}
    assert list(hints) == ["drop_call:20", "change_arg:20:/order", "flip_ok:30", "drop_event:40"]
    assert "failure_handled" in hints["flip_ok:30"]
    assert plain(hints["flip_ok:30"]) == "failure_handled, successful counts"
    assert (report["killed"], report["survived"], report["equivalent"], report["invalid"]) == (3, 4, 0, 0)
    assert report["score"] == pytest.approx(3 / 7)


def test_section6_example_the_control_kills_neither(tmp_path: Path) -> None:
    """§6 example and point 64: the auto control (run_status completed, tool_calls refund min 1) kills
    drop_call:20 and drop_event:40 only — neither drop_approval:10 nor flip_ok:30 — so its score is 2/7,
    at least half of 3/7: "mutants too easy"."""
    report = mutate(example(tmp_path))
    assert report["control"]["auto"] is True
    assert (report["control"]["killed"], report["control"]["survived"]) == (2, 5)
    assert report["control"]["score"] == pytest.approx(2 / 7)
    assert report["control"]["too_easy"] is True
    # The same control, written out and used as the main contract, shows which mutants it kills.
    as_main = write_case(tmp_path / "as-main", auto_control("x", "completed", ["refund"])["rules"],
                         [json.loads(line) for line in (tmp_path / "t.jsonl").read_text().splitlines()])
    killed = [m["id"] for m in mutate(as_main)["mutants"] if m["status"] == "killed"]
    assert killed == ["drop_call:20", "drop_event:40"]


# -- one test per operator ------------------------------------------------------------------------

def test_drop_call_removes_the_call_and_its_result(tmp_path: Path) -> None:
    """Points 57-59: drop_call's sites are every tool.call, removed with its paired result (if any);
    the remaining events keep their own times. Killed by tool_calls min."""
    evs = timed(call("get", "c1", {"id": "A1"}), result("c1"), call("put", "c2", {"v": 1}), ev("run.completed"))
    folder = write_case(tmp_path, [rule("need-get", "tool_calls", tool="get", min=1)], evs)
    report = mutate(folder)
    assert ids(report, "drop_call") == ["drop_call:10", "drop_call:30"]
    assert outcome_of(report, "drop_call:10") == ("killed", ["need-get"])
    assert outcome_of(report, "drop_call:30") == ("survived", [])
    assert mutant(folder, "drop_call:10") == renumbered([evs[2], evs[3]])
    assert mutant(folder, "drop_call:30") == renumbered([evs[0], evs[1], evs[3]])


def test_drop_event_sites_and_content(tmp_path: Path) -> None:
    """Point 57: drop_event's sites are the events that are not a tool.call, a paired tool.result, an
    approval.granted or an outcome.observed (run.start, messages, orphan results, telemetry, the
    terminal…). Killed by require_event; point 62 (5): dropping a telemetry line is equivalent."""
    evs = timed(ev("run.start"), ev("agent.message"), ev("approval.granted", tool="get"),
                call("get", "c1"), result("c1"), result("zz"),
                ev("outcome.observed", outcome_id="o", verdict="satisfied", evidence_class="configured_verifier"),
                ev("telemetry.heartbeat"), ev("run.completed"))
    folder = write_case(tmp_path, [rule("said-something", "require_event", match={"type": "agent.message"})],
                        evs, version=1)
    report = mutate(folder)
    assert ids(report, "drop_event") == ["drop_event:10", "drop_event:20", "drop_event:60", "drop_event:80",
                                         "drop_event:90"]
    assert outcome_of(report, "drop_event:20") == ("killed", ["said-something"])
    assert entry(report, "drop_event:80")["status"] == "equivalent"
    assert mutant(folder, "drop_event:20") == renumbered([e for i, e in enumerate(evs) if i != 1])


def test_swap_calls_exchanges_a_pair_with_the_next_pair_of_another_tool(tmp_path: Path) -> None:
    """Point 59: each complete pair A is swapped with the nearest later complete pair B of a different
    tool, slot for slot, the times staying with the positions. Killed by an exact tool_order."""
    evs = timed(call("a", "c1", {"k": 1}), result("c1"), call("a", "c2", {"k": 2}), result("c2"),
                call("b", "c3", {}), result("c3"), ev("run.completed"))
    folder = write_case(tmp_path, [rule("flow", "tool_order", tools=["a", "a", "b"], mode="exact")], evs)
    report = mutate(folder)
    assert ids(report, "swap_calls") == ["swap_calls:10", "swap_calls:30"]
    assert outcome_of(report, "swap_calls:10") == ("killed", ["flow"])
    assert outcome_of(report, "swap_calls:30") == ("killed", ["flow"])
    assert mutant(folder, "swap_calls:10") == moved(evs, [4, 5, 2, 3, 0, 1, 6])
    assert mutant(folder, "swap_calls:30") == moved(evs, [0, 1, 4, 5, 2, 3, 6])


def test_swap_calls_needs_the_result_of_a_before_the_call_of_b(tmp_path: Path) -> None:
    """Point 59: a pair is swapped only when A's result precedes B's call, and only complete pairs
    (a call with a tool and its paired result) take part."""
    evs = numbered(call("a", "c1"), call("b", "c2"), result("c1"), result("c2"),
                   call("c", "c3"), call(None, "c4"), result("c4"), ev("run.completed"))
    folder = write_case(tmp_path, [rule("need-a", "tool_calls", tool="a", min=1)], evs)
    # a (10,30) and b (20,40) interleave; c (50) has no result; the tool-less c4 is no pair.
    assert ids(mutate(folder), "swap_calls") == []


def test_change_arg_takes_the_first_other_value_of_the_same_type(tmp_path: Path) -> None:
    """Points 57, 58, 61: every string, number or boolean leaf of a call's args is a site (null leaves
    are not), ids carry the JSON Pointer, and the value is the first one — over every tool.call `args`
    and tool.result `result`, in trace order, depth-first — of the leaf's JSON type that differs from
    it (a boolean is not a number); else the boolean is negated. Killed by tool_args."""
    evs = numbered(call("get", "c1", {"id": "A1", "n": 2, "f": True, "tags": ["x"], "a/b": "A1", "o": {"m": None}}),
                   result("c1", result={"flag": True, "count": 5}),
                   call("put", "c2", {"q": "B2"}),
                   ev("run.completed"))
    folder = write_case(tmp_path, [rule("get-args", "tool_args", tool="get", match={"id": "A1"})], evs)
    report = mutate(folder)
    assert ids(report, "change_arg") == ["change_arg:10:/id", "change_arg:10:/n", "change_arg:10:/f",
                                         "change_arg:10:/tags/0", "change_arg:10:/a~1b", "change_arg:30:/q"]
    assert outcome_of(report, "change_arg:10:/id") == ("killed", ["get-args"])
    assert outcome_of(report, "change_arg:10:/n") == ("survived", [])

    def with_args(position: int, **changes: Any) -> list[dict[str, Any]]:
        out = [dict(e) for e in evs]
        args = json.loads(json.dumps(out[position]["args"]))
        for key, value in changes.items():
            if key == "tags":
                args["tags"] = value
            else:
                args[key.replace("_slash_", "/")] = value
        out[position]["args"] = args
        return renumbered(out)

    assert mutant(folder, "change_arg:10:/id") == with_args(0, id="x")
    assert mutant(folder, "change_arg:10:/n") == with_args(0, n=5)
    assert mutant(folder, "change_arg:10:/f") == with_args(0, f=False)
    assert mutant(folder, "change_arg:10:/tags/0") == with_args(0, tags=["A1"])
    assert mutant(folder, "change_arg:10:/a~1b") == with_args(0, a_slash_b="x")
    assert mutant(folder, "change_arg:30:/q") == with_args(2, q="A1")


def test_change_arg_without_another_value_appends_tilde_m_or_adds_one(tmp_path: Path) -> None:
    """Point 58: with no other value of its type in the trace, a string gets `~m` appended and a
    number gets 1 added."""
    evs = numbered(call("get", "c1", {"q": "x", "k": 3}), ev("run.completed"))
    folder = write_case(tmp_path, [rule("need-get", "tool_calls", tool="get", min=1)], evs)
    assert ids(mutate(folder), "change_arg") == ["change_arg:10:/q", "change_arg:10:/k"]
    assert mutant(folder, "change_arg:10:/q")[0]["args"] == {"q": "x~m", "k": 3}
    assert mutant(folder, "change_arg:10:/k")[0]["args"] == {"q": "x", "k": 4}


def test_duplicate_call_inserts_the_pair_after_the_later_of_the_two(tmp_path: Path) -> None:
    """Point 60: duplicate_call inserts a copy of the call and of its paired result (if any) directly
    after the later of the two, with call_id `<id>~m`; inserted events copy the time of the event
    before them (point 59). Killed by tool_calls max."""
    evs = timed(call("a", "c1", {"k": 1}), ev("agent.message"), result("c1", result={"r": 1}),
                call("b", "c2"), ev("run.completed"))
    folder = write_case(tmp_path, [rule("once", "tool_calls", tool="a", max=1)], evs)
    report = mutate(folder)
    assert ids(report, "duplicate_call") == ["duplicate_call:10", "duplicate_call:40"]
    assert outcome_of(report, "duplicate_call:10") == ("killed", ["once"])
    assert outcome_of(report, "duplicate_call:40") == ("survived", [])
    copy_call = {**evs[0], "call_id": "c1~m", "time": evs[2]["time"]}
    copy_result = {**evs[2], "call_id": "c1~m", "time": evs[2]["time"]}
    assert mutant(folder, "duplicate_call:10") == renumbered([evs[0], evs[1], evs[2], copy_call, copy_result,
                                                              evs[3], evs[4]])
    copy_b = {**evs[3], "call_id": "c2~m", "time": evs[3]["time"]}
    assert mutant(folder, "duplicate_call:40") == renumbered([evs[0], evs[1], evs[2], evs[3], copy_b, evs[4]])


def test_drop_approval_removes_a_grant(tmp_path: Path) -> None:
    """Points 57, 59: every approval.granted is a drop_approval site; the rest keep their times.
    Killed by v1 require_approval."""
    evs = timed(ev("approval.granted", approval_id="g1", tool="refund"), call("refund", "c1"), result("c1"),
                ev("run.completed"))
    folder = write_case(tmp_path, [rule("needs-approval", "require_approval", tool="refund")], evs, version=1)
    report = mutate(folder)
    assert ids(report, "drop_approval") == ["drop_approval:10"]
    assert outcome_of(report, "drop_approval:10") == ("killed", ["needs-approval"])
    assert mutant(folder, "drop_approval:10") == renumbered(evs[1:])


def test_move_approval_after_puts_the_grant_directly_after_its_own_call(tmp_path: Path) -> None:
    """Points 57, 59: a grant's own call is the first later tool.call whose tool, call_id and
    approval_id equal the grant's wherever the grant has them; the grant moves directly after it and
    times stay by position. A grant with no own call is no site. Killed by approval_bound."""
    evs = timed(ev("approval.granted", approval_id="g1", tool="refund", call_id="c2"),
                call("get", "c1"), result("c1"),
                call("refund", "c9", approval_id="g1"),            # another call_id: not the own call
                call("refund", "c2", approval_id="g1"), result("c2"),
                ev("approval.granted", approval_id="g9", tool="refund", call_id="zz"),   # no own call
                ev("run.completed"))
    # one_use false: the grant covers both refund calls of T, and neither once it moves after c2.
    folder = write_case(tmp_path, [rule("bound", "approval_bound", tool="refund", one_use=False)], evs)
    report = mutate(folder)
    assert ids(report, "move_approval_after") == ["move_approval_after:10"]
    assert outcome_of(report, "move_approval_after:10") == ("killed", ["bound"])
    assert mutant(folder, "move_approval_after:10") == moved(evs, [1, 2, 3, 4, 0, 5, 6, 7])


def test_rebind_approval_changes_the_call_id_or_an_arg_of_the_grant(tmp_path: Path) -> None:
    """Points 57, 58, 61: rebind_approval's sites are each grant's call_id (`~m` appended, detail
    `call_id`, first) and each scalar leaf of its args (not null), whose value is taken as change_arg's
    from the calls' args and the results. Killed by approval_bound with bind call_id / args."""
    grant_args = {"order": "A1", "amount": 10, "note": None}
    evs = numbered(call("get", "c0", {"id": "B7"}), result("c0", result={"paid": 12}),
                   ev("approval.granted", approval_id="g1", tool="refund", call_id="c1", args=grant_args),
                   call("refund", "c1", grant_args, approval_id="g1"), result("c1"),
                   ev("run.completed"))
    folder = write_case(tmp_path, [rule("bound-args", "approval_bound", tool="refund", bind="args"),
                                   rule("bound-id", "approval_bound", tool="refund", bind="call_id")], evs)
    report = mutate(folder)
    assert ids(report, "rebind_approval") == ["rebind_approval:30:call_id", "rebind_approval:30:/order",
                                              "rebind_approval:30:/amount"]
    assert outcome_of(report, "rebind_approval:30:call_id") == ("killed", ["bound-id"])
    assert outcome_of(report, "rebind_approval:30:/order") == ("killed", ["bound-args"])
    assert outcome_of(report, "rebind_approval:30:/amount") == ("killed", ["bound-args"])

    def with_grant(**changes: Any) -> list[dict[str, Any]]:
        out = [dict(e) for e in evs]
        out[2] = {**out[2], **changes}
        return renumbered(out)

    assert mutant(folder, "rebind_approval:30:call_id") == with_grant(call_id="c1~m")
    assert mutant(folder, "rebind_approval:30:/order") == with_grant(args={**grant_args, "order": "B7"})
    assert mutant(folder, "rebind_approval:30:/amount") == with_grant(args={**grant_args, "amount": 12})


def test_stop_earlier_moves_the_stop_directly_before_the_previous_call(tmp_path: Path) -> None:
    """Points 57, 59: every control.stop with an earlier tool.call is a site; the stop moves directly
    before the nearest earlier tool.call, times staying by position. Killed by stop_is_final."""
    evs = timed(call("a", "c1"), result("c1"), call("b", "c2"), result("c2"), ev("control.stop"),
                ev("run.completed"))
    folder = write_case(tmp_path, [rule("final", "stop_is_final")], evs, version=1)
    report = mutate(folder)
    assert ids(report, "stop_earlier") == ["stop_earlier:50"]
    assert outcome_of(report, "stop_earlier:50") == ("killed", ["final"])
    assert mutant(folder, "stop_earlier:50") == moved(evs, [0, 1, 4, 2, 3, 5])


def test_stop_without_an_earlier_call_is_no_stop_earlier_site(tmp_path: Path) -> None:
    """Point 57: stop_earlier applies only to a control.stop with an earlier tool.call."""
    folder = write_case(tmp_path, [rule("need-status", "run_status", equals="completed")],
                        numbered(ev("control.stop"), ev("run.completed")))
    assert ids(mutate(folder), "stop_earlier") == []


def test_flip_ok_toggles_ok_and_turns_an_absent_ok_into_false(tmp_path: Path) -> None:
    """Point 57: every tool.result is a flip_ok site (true→false, absent→false). Killed by
    failure_handled (when nothing handles the failure) and `tool_calls count: successful`, listed in
    contract order (point 63)."""
    evs = numbered(call("search", "s1"), result("s1", ok=True), call("search", "s2"), result("s2", ok=None),
                   ev("run.completed"))
    folder = write_case(tmp_path, [
        rule("handled", "failure_handled", tool="search", within_events=2),
        rule("succ", "tool_calls", tool="search", count="successful", min=2)], evs)
    report = mutate(folder)
    assert ids(report, "flip_ok") == ["flip_ok:20", "flip_ok:40"]
    assert outcome_of(report, "flip_ok:20") == ("killed", ["succ"])        # the retry at 30 handles it
    assert outcome_of(report, "flip_ok:40") == ("killed", ["handled", "succ"])
    flipped = mutant(folder, "flip_ok:40")
    assert flipped == renumbered([*evs[:3], {**evs[3], "ok": False}, evs[4]])
    assert mutant(folder, "flip_ok:20")[1] == {**evs[1], "ok": False}


def test_flip_ok_turns_false_into_true(tmp_path: Path) -> None:
    """Point 57: false→true."""
    evs = numbered(call("search", "s1"), result("s1", ok=False), ev("agent.message"), ev("run.completed"))
    folder = write_case(tmp_path, [rule("handled", "failure_handled", tool="search", within_events=2)], evs)
    assert ids(mutate(folder), "flip_ok") == ["flip_ok:20"]
    assert mutant(folder, "flip_ok:20")[1] == {**evs[1], "ok": True}


OUTCOME_OK = {"outcome_id": "o1", "verdict": "satisfied", "evidence_class": "configured_verifier"}
OUTCOME_BAD = {"outcome_id": "o2", "verdict": "violated", "evidence_class": "self_attestation"}


def test_drop_outcome_removes_an_outcome(tmp_path: Path) -> None:
    """Point 57: every outcome.observed is a drop_outcome site. Killed by completion_requires_outcome."""
    evs = timed(ev("outcome.observed", **OUTCOME_OK), ev("outcome.observed", **OUTCOME_BAD), ev("run.completed"))
    folder = write_case(tmp_path, [rule("proof", "completion_requires_outcome")], evs, version=1)
    report = mutate(folder)
    assert ids(report, "drop_outcome") == ["drop_outcome:10", "drop_outcome:20"]
    assert outcome_of(report, "drop_outcome:10") == ("killed", ["proof"])
    assert outcome_of(report, "drop_outcome:20") == ("survived", [])
    assert mutant(folder, "drop_outcome:10") == renumbered(evs[1:])


def test_degrade_outcome_sets_violated_or_self_attestation_unless_already_so(tmp_path: Path) -> None:
    """Points 57, 61: degrade_outcome makes one mutant setting `verdict: violated` (detail `verdict`,
    first) and one setting `evidence_class: self_attestation`, each skipped when already so. Killed by
    completion_requires_outcome."""
    evs = timed(ev("outcome.observed", **OUTCOME_OK), ev("outcome.observed", **OUTCOME_BAD), ev("run.completed"))
    folder = write_case(tmp_path, [rule("proof", "completion_requires_outcome")], evs, version=1)
    report = mutate(folder)
    assert ids(report, "drop_outcome", "degrade_outcome") == [
        "drop_outcome:10", "degrade_outcome:10:verdict", "degrade_outcome:10:evidence_class", "drop_outcome:20"]
    assert outcome_of(report, "degrade_outcome:10:verdict") == ("killed", ["proof"])
    assert outcome_of(report, "degrade_outcome:10:evidence_class") == ("killed", ["proof"])
    assert mutant(folder, "degrade_outcome:10:verdict") == renumbered([{**evs[0], "verdict": "violated"}, *evs[1:]])
    assert mutant(folder, "degrade_outcome:10:evidence_class") == renumbered(
        [{**evs[0], "evidence_class": "self_attestation"}, *evs[1:]])


def test_inflate_retries_inserts_three_failed_copies_before_the_call(tmp_path: Path) -> None:
    """Points 57, 59, 60: every tool.call with a tool is a site; three pairs go directly before it, each
    a copy of the call (call_id `<id>~m1..~m3`) then `{type: tool.result, call_id, ok: false}` without
    result or duration, all taking the time of the event before them; an absent call_id stays absent.
    Killed by retry_limit."""
    evs = timed(ev("run.start"),
                call("search", "s1", {"q": "x"}, call_signature="search:x"),
                result("s1", result={"hits": 1}, duration_ms=5),
                call("ping"),
                ev("run.completed"))
    folder = write_case(tmp_path, [rule("retries", "retry_limit", max_attempts=1)], evs)
    report = mutate(folder)
    assert ids(report, "inflate_retries") == ["inflate_retries:20", "inflate_retries:40"]
    assert outcome_of(report, "inflate_retries:20") == ("killed", ["retries"])
    assert outcome_of(report, "inflate_retries:40") == ("killed", ["retries"])
    t0, t2 = evs[0]["time"], evs[2]["time"]
    inserted = []
    for k in (1, 2, 3):
        inserted += [{**evs[1], "call_id": f"s1~m{k}", "time": t0},
                     {"type": "tool.result", "call_id": f"s1~m{k}", "ok": False, "seq": 0, "time": t0}]
    assert mutant(folder, "inflate_retries:20") == renumbered([evs[0], *inserted, *evs[1:]])
    pings = []
    for _ in (1, 2, 3):
        pings += [{**evs[3], "time": t2}, {"type": "tool.result", "ok": False, "seq": 0, "time": t2}]
    assert mutant(folder, "inflate_retries:40") == renumbered([*evs[:3], *pings, *evs[3:]])


def test_inflate_retries_copies_before_a_first_event_have_no_time(tmp_path: Path) -> None:
    """Point 59: inserted events copy the time of the event before them, none if there is none."""
    evs = timed(call("ping", "p1"), ev("run.completed"))
    folder = write_case(tmp_path, [rule("need-ping", "tool_calls", tool="ping", min=1)], evs)
    events = mutant(folder, "inflate_retries:10")
    assert [("time" in e) for e in events] == [False] * 6 + [True, True]
    assert [e.get("call_id") for e in events[:6]] == ["p1~m1", "p1~m1", "p1~m2", "p1~m2", "p1~m3", "p1~m3"]


def test_stale_result_copies_the_nearest_earlier_different_result(tmp_path: Path) -> None:
    """Points 57, 58: a paired result whose tool has an earlier paired result with a different
    (`result`, `ok`) takes `result` and `ok` of the nearest such one. Killed by a `$from_result` rule."""
    evs = numbered(call("get", "c1", {"id": "A"}), result("c1", ok=False, result={"v": 1}),
                   call("get", "c2", {"id": "B"}), result("c2", result={"v": 2}),
                   call("get", "c3", {"id": "C"}), result("c3", result={"v": 2}),
                   ev("run.completed", output={"v": 2}))
    fresh = {"v": {"$from_result": {"tool": "get", "path": "v", "where": {"id": "C"}}}}
    folder = write_case(tmp_path, [rule("fresh", "output_match", match=fresh)], evs)
    report = mutate(folder)
    assert ids(report, "stale_result") == ["stale_result:40", "stale_result:60"]
    assert outcome_of(report, "stale_result:60") == ("killed", ["fresh"])
    assert outcome_of(report, "stale_result:40") == ("survived", [])
    stale = {"result": {"v": 1}, "ok": False}
    assert mutant(folder, "stale_result:60") == renumbered([*evs[:5], {**evs[5], **stale}, evs[6]])
    assert mutant(folder, "stale_result:40") == renumbered([*evs[:3], {**evs[3], **stale}, *evs[4:]])


def test_misreport_output_edits_each_node_of_the_output(tmp_path: Path) -> None:
    """Points 57, 58, 61: every node of the terminal's output is a site except objects, null and empty
    arrays; the last element of an array is dropped, a boolean negated, 1 added to a number, `~m`
    appended to a string; ids carry the pointer. Killed by output_match and matches_output_length."""
    output = {"refunds": ["A1"], "total": 10, "paid": True, "note": "x", "meta": {}, "none": None, "empty": []}
    evs = numbered(call("refund", "c1"), result("c1"), ev("run.completed", output=output))
    folder = write_case(tmp_path, [rule("total", "output_match", match={"total": 10}),
                                   rule("count", "tool_calls", tool="refund", matches_output_length="refunds")], evs)
    report = mutate(folder)
    assert ids(report, "misreport_output") == [
        "misreport_output:30:/refunds", "misreport_output:30:/refunds/0", "misreport_output:30:/total",
        "misreport_output:30:/paid", "misreport_output:30:/note"]
    assert outcome_of(report, "misreport_output:30:/total") == ("killed", ["total"])
    assert outcome_of(report, "misreport_output:30:/refunds") == ("killed", ["count"])
    assert outcome_of(report, "misreport_output:30:/note") == ("survived", [])
    expected: dict[str, dict[str, Any]] = {
        "/refunds": {"refunds": []}, "/refunds/0": {"refunds": ["A1~m"]}, "/total": {"total": 11},
        "/paid": {"paid": False}, "/note": {"note": "x~m"}}
    for pointer, change in expected.items():
        events = mutant(folder, f"misreport_output:30:{pointer}")
        assert events == renumbered([evs[0], evs[1], {**evs[2], "output": {**output, **change}}]), pointer


def test_misreport_output_of_the_root_has_no_detail(tmp_path: Path) -> None:
    """Point 61: the detail is omitted for the output's root."""
    evs = numbered(ev("run.completed", output=[1, 2]))
    folder = write_case(tmp_path, [rule("done", "run_status", equals="completed")], evs)
    assert ids(mutate(folder), "misreport_output") == [
        "misreport_output:10", "misreport_output:10:/0", "misreport_output:10:/1"]
    assert mutant(folder, "misreport_output:10")[0]["output"] == [1]
    assert mutant(folder, "misreport_output:10:/0")[0]["output"] == [2, 2]
    assert mutant(folder, "misreport_output:10:/1")[0]["output"] == [1, 3]


def test_inflate_duration_multiplies_positive_durations_by_ten(tmp_path: Path) -> None:
    """§6 table, point 57: every event with duration_ms > 0 is a site; it is multiplied by 10. Killed
    by latency_budget and run_duration."""
    evs = numbered(call("search", "s1"), result("s1", duration_ms=150), call("search", "s2"),
                   result("s2", duration_ms=0), ev("run.completed", duration_ms=1000))
    folder = write_case(tmp_path, [rule("fast", "latency_budget", tool="search", max_ms=1000),
                                   rule("quick", "run_duration", max_ms=5000)], evs)
    report = mutate(folder)
    assert ids(report, "inflate_duration") == ["inflate_duration:20", "inflate_duration:50"]
    assert outcome_of(report, "inflate_duration:20") == ("killed", ["fast"])
    assert outcome_of(report, "inflate_duration:50") == ("killed", ["quick"])
    assert mutant(folder, "inflate_duration:20") == renumbered([evs[0], {**evs[1], "duration_ms": 1500}, *evs[2:]])
    assert mutant(folder, "inflate_duration:50") == renumbered([*evs[:4], {**evs[4], "duration_ms": 10000}])


# -- order, ids and the cap (point 61) ------------------------------------------------------------

def rich_trace() -> list[dict[str, Any]]:
    """Ten events with input seq 1..10, so an id's seq (the input's) differs from the renumbered one."""
    return [{"seq": i + 1, **spec} for i, spec in enumerate([
        ev("run.start"),
        call("get", "c1", {"id": "A"}),
        result("c1", result={"v": 1}, duration_ms=5),
        call("put", "c2", {"v": 1}),
        result("c2"),
        call("get", "c3", {"id": "B"}),
        result("c3", result={"v": 2}),
        ev("outcome.observed", outcome_id="o", verdict="satisfied", evidence_class="configured_verifier"),
        ev("control.stop"),
        ev("run.completed", output={"n": 1}, duration_ms=9)])]


RICH_IDS = [
    "drop_event:1",
    "drop_call:2", "swap_calls:2", "change_arg:2:/id", "duplicate_call:2", "inflate_retries:2",
    "flip_ok:3", "inflate_duration:3",
    "drop_call:4", "swap_calls:4", "change_arg:4:/v", "duplicate_call:4", "inflate_retries:4",
    "flip_ok:5",
    "drop_call:6", "change_arg:6:/id", "duplicate_call:6", "inflate_retries:6",
    "flip_ok:7", "stale_result:7",
    "drop_outcome:8", "degrade_outcome:8:verdict", "degrade_outcome:8:evidence_class",
    "drop_event:9", "stop_earlier:9",
    "drop_event:10", "misreport_output:10:/n", "inflate_duration:10",
]


def test_mutants_are_ordered_by_site_then_table_row_then_detail(tmp_path: Path) -> None:
    """Point 61: order by the site event's position, then the operator's row in §6's table, then the
    detail; ids are `<operator>:<seq in the input trace>[:<detail>]`."""
    folder = write_case(tmp_path, [rule("need-get", "tool_calls", tool="get", min=1)], rich_trace())
    report = mutate(folder)
    assert ids(report) == RICH_IDS
    assert [m["operator"] for m in report["mutants"]] == [i.split(":")[0] for i in RICH_IDS]
    # change_arg:4:/v takes the first other number in the trace: the 2 of c3's result.
    assert mutant(folder, "change_arg:4:/v")[3]["args"] == {"v": 2}
    assert [e["seq"] for e in mutant(folder, "drop_event:1")] == [10 * i for i in range(1, 10)]


@pytest.mark.parametrize("cap", [1, 5, 13, 27, 28, 500])
def test_max_mutants_keeps_the_candidates_at_floor_i_n_over_k(tmp_path: Path, cap: int) -> None:
    """Point 61: with N candidates above K = --max-mutants, the kept ones are those at index ⌊i·N/K⌋,
    i = 0 … K−1 (all of them when N ≤ K)."""
    folder = write_case(tmp_path, [rule("need-get", "tool_calls", tool="get", min=1)], rich_trace())
    n = len(RICH_IDS)
    kept = RICH_IDS if n <= cap else [RICH_IDS[i * n // cap] for i in range(cap)]
    assert ids(mutate(folder, max_mutants=cap)) == kept


# -- classification (points 62, 63) ---------------------------------------------------------------

def test_an_id_writes_the_input_seq_as_javascript_writes_the_number(tmp_path: Path) -> None:
    """Point 61: "<operator>:<seq of the site event in the input trace>"; seqs are JSON numbers,
    written as everywhere in a report (`3.0` is `3`, `1e300` is `1e+300`)."""
    evs = [{"seq": 3.0, **call("a", "x")}, {"seq": 1e300, **result("x")}, {"seq": 2e301, **ev("run.completed")}]
    report = mutate(write_case(tmp_path, [rule("c", "tool_calls", tool="a", min=1)], evs))
    assert ids(report, "drop_call", "flip_ok", "drop_event") == ["drop_call:3", "flip_ok:1e+300", "drop_event:2e+301"]


def test_a_mutant_failing_validation_is_invalid_listed_and_not_scored(tmp_path: Path) -> None:
    """Point 63: a mutant failing event validation is invalid. A call_id of 498 characters becomes 500
    with `~m` (still valid, v1 allows 1..500) and 501 with `~m1` (invalid)."""
    cid = "c" * 498
    evs = numbered(call("a", cid), result(cid), ev("run.completed"))
    folder = write_case(tmp_path, [rule("no-shell", "deny_tool", tool="shell.*")], evs, version=1)
    report = mutate(folder)
    assert entry(report, "inflate_retries:10")["status"] == "invalid"
    assert entry(report, "duplicate_call:10")["status"] != "invalid"
    assert report["invalid"] == 1
    assert report["killed"] + report["survived"] + report["equivalent"] == len(report["mutants"]) - 1


def test_dropping_telemetry_is_equivalent_and_over_block_when_the_contract_rejects_it(tmp_path: Path) -> None:
    """Points 62 (5), 63: telemetry.* events are outside the fingerprint, so dropping one is equivalent;
    a contract that still gives it an error is flagged over_block."""
    evs = numbered(call("a", "c1"), result("c1"), ev("telemetry.heartbeat"), ev("run.completed"))
    strict = write_case(tmp_path / "strict", [rule("beats", "require_event", match={"type": "telemetry.*"})],
                        evs, version=1)
    report = mutate(strict)
    m = entry(report, "drop_event:30")
    assert (m["status"], m.get("over_block")) == ("equivalent", True)
    assert (report["equivalent"], report["over_block"]) == (1, 1)
    loose = write_case(tmp_path / "loose", [rule("need-a", "tool_calls", tool="a", min=1)], evs)
    report = mutate(loose)
    m = entry(report, "drop_event:30")
    assert m["status"] == "equivalent" and not m.get("over_block")
    assert (report["equivalent"], report["over_block"]) == (1, 0)


def test_a_grant_that_covers_no_call_is_outside_the_fingerprint(tmp_path: Path) -> None:
    """Point 62 (2), (5): grants enter the fingerprint only as the covering grants of a call (an
    earlier grant), and they are not among the "other events" of (5); so dropping or rebinding a grant
    given after every call is equivalent."""
    evs = numbered(call("refund", "c1"), result("c1"),
                   ev("approval.granted", approval_id="g1", tool="refund", call_id="c1"), ev("run.completed"))
    folder = write_case(tmp_path, [rule("need-refund", "tool_calls", tool="refund", min=1)], evs)
    report = mutate(folder)
    assert ids(report, "drop_approval", "move_approval_after", "rebind_approval") == [
        "drop_approval:30", "rebind_approval:30:call_id"]
    assert entry(report, "drop_approval:30")["status"] == "equivalent"
    assert entry(report, "rebind_approval:30:call_id")["status"] == "equivalent"


def test_an_orphan_result_counts_by_type_duration_and_place_only(tmp_path: Path) -> None:
    """Point 62 (5): an orphan result is one of the "other events", seen as (type, reason, status,
    claims_completion, confidence, duration_ms, number of calls before it): flipping its `ok` is
    equivalent, inflating its duration is not. Point 57: it is a drop_event and a flip_ok site."""
    evs = numbered(call("a", "c1"), result("c1"), result("zz", ok=True, duration_ms=7), ev("run.completed"))
    folder = write_case(tmp_path, [rule("need-a", "tool_calls", tool="a", min=1)], evs)
    report = mutate(folder)
    assert [i for i in ids(report) if i.split(":")[1] == "30"] == ["drop_event:30", "flip_ok:30",
                                                                   "inflate_duration:30"]
    assert entry(report, "flip_ok:30")["status"] == "equivalent"
    assert entry(report, "inflate_duration:30")["status"] == "survived"
    assert entry(report, "drop_event:30")["status"] == "survived"


def test_a_call_without_tool_is_no_inflate_retries_or_swap_site(tmp_path: Path) -> None:
    """Point 57: drop_call and duplicate_call apply to every tool.call, inflate_retries only to calls
    with a tool, swap_calls only to complete pairs (a call with a tool and its result)."""
    evs = numbered(call(None, "c1"), result("c1"), call("b", "c2"), result("c2"), ev("run.completed"))
    folder = write_case(tmp_path, [rule("need-b", "tool_calls", tool="b", min=1)], evs)
    report = mutate(folder)
    assert [i for i in ids(report) if i.split(":")[1] == "10"] == ["drop_call:10", "duplicate_call:10"]


def test_killed_by_lists_only_the_rules_with_error_violations(tmp_path: Path) -> None:
    """Point 63: killed_by lists the rules giving error violations, in contract order; a warning
    rule that also fires is not among them."""
    evs = numbered(call("a", "c1"), result("c1"), ev("run.completed"))
    folder = write_case(tmp_path, [rule("soft-cap", "tool_calls", tool="a", max=1, severity="warning"),
                                   rule("retries", "retry_limit", max_attempts=1),
                                   rule("hard-cap", "tool_calls", tool="a", max=1)], evs)
    report = mutate(folder)
    assert outcome_of(report, "duplicate_call:10") == ("killed", ["retries", "hard-cap"])
    assert not entry(report, "duplicate_call:10").get("warned")


@pytest.mark.parametrize(("reads", "equivalent"), [
    ((), False), (("a",), False), (("b",), True), (("a", "b"), True), (("*",), True)])
def test_reads_make_swaps_of_reads_equivalent(tmp_path: Path, reads: tuple[str, ...], equivalent: bool) -> None:
    """Point 62 (4): grounding is checked for calls whose tool matches no --reads glob: the mutant is
    equal when every such call's set of earlier successful calls is a superset of the original's.
    Swapping a then b: b loses a (a write b → not equivalent), a gains b (a superset: fine)."""
    evs = numbered(call("a", "c1", {"k": 1}), result("c1"), call("b", "c2", {"k": 2}), result("c2"),
                   ev("run.completed"))
    folder = write_case(tmp_path, [rule("need-a", "tool_calls", tool="a", min=1)], evs)
    status = entry(mutate(folder, reads=reads), "swap_calls:10")["status"]
    assert (status == "equivalent") is equivalent, status
    if not equivalent:
        assert status == "survived"


def test_warning_only_mutants_survive_and_count_as_warned(tmp_path: Path) -> None:
    """Point 63: a mutant with only warnings is survived with `warned: true`, counted in `warned`."""
    evs = numbered(call("a", "c1"), result("c1"), ev("run.completed"))
    folder = write_case(tmp_path, [rule("soft-cap", "tool_calls", tool="a", max=1, severity="warning")], evs)
    report = mutate(folder)
    assert ids(report) == ["drop_call:10", "duplicate_call:10", "inflate_retries:10", "flip_ok:20",
                           "drop_event:30"]
    assert [m["status"] for m in report["mutants"]] == ["survived"] * 5
    assert [bool(m.get("warned")) for m in report["mutants"]] == [False, True, True, False, False]
    assert (report["killed"], report["survived"], report["warned"]) == (0, 5, 2)
    assert report["score"] == 0


def test_nothing_scorable_gives_score_null(tmp_path: Path) -> None:
    """Point 63: score = killed / (killed + survived), null when that is 0."""
    folder = write_case(tmp_path, [rule("no-shell", "deny_tool", tool="shell.*")],
                        numbered(ev("telemetry.heartbeat")), version=1)
    report = mutate(folder)
    assert ids(report) == ["drop_event:10"]
    assert entry(report, "drop_event:10")["status"] == "equivalent"
    assert report["score"] is None
    assert report["control"]["score"] is None and report["control"]["too_easy"] is False


# -- the negative control (point 64) --------------------------------------------------------------

def test_the_auto_control_is_run_status_plus_a_call_of_each_tool(tmp_path: Path) -> None:
    """Point 64: the auto control is `run_status equals <status>` plus `tool_calls <tool> min 1` per
    tool in first-call order; the same control given with --control scores the same, and is not auto;
    its hash is that of the file's bytes (point 66)."""
    folder = write_case(tmp_path, [rule("need-get", "tool_calls", tool="get", min=1)], rich_trace(), name="rich")
    auto = mutate(folder)
    assert auto["control"]["auto"] is True
    written = tmp_path / "control.json"
    written.write_text(json.dumps(auto_control("rich", "completed", ["get", "put"])), encoding="utf-8")
    given = mutate(folder, control=written)
    assert given["control"]["auto"] is False
    assert given["control"]["contract_sha256"] == sha256_file(written)
    for key in ("killed", "survived", "score", "too_easy"):
        assert given["control"][key] == auto["control"][key], key
    # Which mutants that control kills: every drop of a tool's only call… and of the terminal.
    as_main = write_case(tmp_path / "as-main", auto_control("rich", "completed", ["get", "put"])["rules"],
                         rich_trace())
    killed = [m["id"] for m in mutate(as_main)["mutants"] if m["status"] == "killed"]
    assert killed == ["drop_call:4", "drop_event:10"]
    assert auto["control"]["killed"] == 2


def test_the_auto_control_of_a_trace_without_terminal_expects_status_none(tmp_path: Path) -> None:
    """Point 64: `equals: <T's run status, "none" included>`, so the auto control always passes T; it
    kills the drop of the only call."""
    evs = numbered(call("a", "c1"), result("c1"))
    folder = write_case(tmp_path, [rule("need-a", "tool_calls", tool="a", min=1)], evs)
    report = mutate(folder)
    assert ids(report) == ["drop_call:10", "duplicate_call:10", "inflate_retries:10", "flip_ok:20"]
    assert (report["control"]["killed"], report["control"]["survived"]) == (1, 3)


def test_a_control_well_below_half_the_score_is_not_too_easy(tmp_path: Path) -> None:
    """Point 64: "mutants too easy" only when the control score is above 0 and at least half the main
    score: here the main contract kills all 7 example mutants and the control 2 (2/7 < 1/2)."""
    folder = example(tmp_path)
    (folder / "c.json").write_text(json.dumps({"version": 2, "name": "strong", "rules": [
        rule("refund-approved", "approval_bound", tool="refund"),
        rule("refund-ok", "tool_calls", tool="refund", count="successful", min=1),
        rule("refund-args", "tool_args", tool="refund", match={"order": "A1"}),
        rule("done", "run_status", equals="completed")]}), encoding="utf-8")
    report = mutate(folder)
    assert (report["killed"], report["survived"], report["score"]) == (7, 0, 1)
    assert (report["control"]["killed"], report["control"]["too_easy"]) == (2, False)


def test_a_control_with_score_zero_is_not_too_easy(tmp_path: Path) -> None:
    """Point 64: a control score of 0 is never "too easy"."""
    folder = example(tmp_path)
    control = tmp_path / "weak.json"
    control.write_text(json.dumps({"version": 1, "name": "weak", "rules": [
        rule("no-shell", "deny_tool", tool="shell.*")]}), encoding="utf-8")
    report = mutate(folder, control=control)
    assert (report["control"]["killed"], report["control"]["score"], report["control"]["too_easy"]) == (0, 0, False)


def test_a_control_the_trace_fails_is_bad_input(tmp_path: Path) -> None:
    """Point 56: a --control that T does not pass is bad input."""
    folder = example(tmp_path)
    control = tmp_path / "failing.json"
    control.write_text(json.dumps({"version": 1, "name": "f", "rules": [
        rule("no-refund", "deny_tool", tool="refund")]}), encoding="utf-8")
    with pytest.raises(InputError):
        mutate_trace(folder / "c.json", folder / "t.jsonl", control=control)


# -- false-positive rewrites (point 65) -----------------------------------------------------------

def window_case(folder: Path) -> Path:
    """A trace of 6 events that passes `max_events: 6` and a precedence with `within_events: 2` exactly;
    the heartbeat rewrite (after the 3rd and the 6th event) breaks both."""
    return write_case(folder, [
        rule("budget", "event_budget", max_events=6),
        rule("window", "precedence", before={"type": "tool.result", "tool": "get"},
             after={"type": "tool.call", "tool": "refund"}, within_events=2)],
        numbered(call("get", "c1", {"id": "A"}), result("c1"), ev("agent.message"),
                 call("refund", "c2", {"order": "A"}), result("c2"), ev("run.completed"), step=1))


def test_a_rewrite_that_fails_is_a_false_positive_naming_the_rules(tmp_path: Path) -> None:
    """Point 65: the heartbeat rewrite adds telemetry lines, which the position-counting rules see;
    the other rewrites (renumber, comments, reorder_keys, json_array) pass. One entry per failing
    rewrite: {rewrite, killed_by}, rules in contract order."""
    report = mutate(window_case(tmp_path))
    assert report["false_positives"] == [{"rewrite": "heartbeat", "killed_by": ["budget", "window"]}]


def test_heartbeat_counts_from_the_third_event(tmp_path: Path) -> None:
    """Point 65: a heartbeat goes after the 3rd, 6th, … event, so 2 events get none and 3 get one."""
    two = write_case(tmp_path / "two", [rule("budget", "event_budget", max_events=2)],
                     numbered(call("a", "c1"), ev("run.completed")), version=1)
    assert mutate(two)["false_positives"] == []
    three = write_case(tmp_path / "three", [rule("budget", "event_budget", max_events=3)],
                       numbered(call("a", "c1"), result("c1"), ev("run.completed")), version=1)
    assert mutate(three)["false_positives"] == [{"rewrite": "heartbeat", "killed_by": ["budget"]}]


def test_no_rewrite_removes_a_rewrite(tmp_path: Path) -> None:
    """Point 65: `--no-rewrite NAME` removes one rewrite."""
    assert mutate(window_case(tmp_path), skip=("heartbeat",))["false_positives"] == []
    every = ("renumber", "heartbeat", "comments", "reorder_keys", "json_array", "corpus")
    assert mutate(window_case(tmp_path), skip=every)["false_positives"] == []


def test_unknown_no_rewrite_name_is_bad_input(tmp_path: Path) -> None:
    """Point 56: an unknown --no-rewrite name is bad input."""
    folder = window_case(tmp_path)
    with pytest.raises(InputError):
        mutate_trace(folder / "c.json", folder / "t.jsonl", skip=("heartbeats",))


def test_each_failing_corpus_file_is_a_false_positive(tmp_path: Path) -> None:
    """Point 65: `corpus` checks each *.jsonl / *.json file of --corpus, sorted by name; one entry per
    failing file, with `file`."""
    folder = write_case(tmp_path / "case", [rule("need-refund", "tool_calls", tool="refund", min=1)],
                        numbered(call("refund", "c1"), result("c1"), ev("run.completed")))
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    without = numbered(call("get", "c1"), result("c1"), ev("run.completed"))
    (corpus / "d.jsonl").write_text(jsonl(without), encoding="utf-8")
    (corpus / "a.jsonl").write_text(jsonl(numbered(call("refund", "r1"), ev("run.completed"))), encoding="utf-8")
    (corpus / "b.json").write_text(json.dumps(without), encoding="utf-8")
    (corpus / "c.txt").write_text(jsonl(without), encoding="utf-8")
    report = mutate(folder, corpus=corpus)
    fps = report["false_positives"]
    assert [(fp["rewrite"], Path(fp["file"]).name, fp["killed_by"]) for fp in fps] == [
        ("corpus", "b.json", ["need-refund"]), ("corpus", "d.jsonl", ["need-refund"])]
    assert mutate(folder, corpus=corpus, skip=("corpus",))["false_positives"] == []


# -- bad input (point 56) -------------------------------------------------------------------------

def test_a_trace_failing_the_contract_is_bad_input(tmp_path: Path) -> None:
    """Point 56: T must pass C; otherwise mutate refuses."""
    folder = write_case(tmp_path, [rule("no-refund", "deny_tool", tool="refund")],
                        numbered(call("refund", "c1"), ev("run.completed")), version=1)
    with pytest.raises(InputError):
        mutate_trace(folder / "c.json", folder / "t.jsonl")
    with pytest.raises(InputError):
        mutant_text(folder / "c.json", folder / "t.jsonl", "drop_call:10")


def test_warnings_do_not_stop_the_trace_from_passing(tmp_path: Path) -> None:
    """Point 56: T passes when check would exit 0 — warnings allowed."""
    folder = write_case(tmp_path, [rule("soft", "deny_tool", tool="refund", severity="warning")],
                        numbered(call("refund", "c1"), ev("run.completed")), version=1)
    assert ids(mutate(folder)) == ["drop_call:10", "duplicate_call:10", "inflate_retries:10", "drop_event:20"]


def test_missing_files_are_bad_input(tmp_path: Path) -> None:
    """Point 56: an unreadable contract, trace or control is bad input."""
    folder = example(tmp_path)
    for contract, trace, control in [(tmp_path / "nope.json", folder / "t.jsonl", None),
                                     (folder / "c.json", tmp_path / "nope.jsonl", None),
                                     (folder / "c.json", folder / "t.jsonl", tmp_path / "nope-control.json")]:
        with pytest.raises(InputError):
            mutate_trace(contract, trace, control=control)


LINT_ERROR_RULES = [rule("no-shell", "deny_tool", tool="shell.*"),
                    rule("must-exec", "tool_calls", tool="shell.exec", min=1)]


def test_a_v2_contract_with_lint_errors_is_refused_unless_no_lint(tmp_path: Path) -> None:
    """Point 56 (and §4, §10.8): a version-2 contract with lint errors is refused as by check; with
    --no-lint it is used, and then the trace's failure is what is reported."""
    folder = write_case(tmp_path, LINT_ERROR_RULES,
                        numbered(call("shell.exec", "c1"), result("c1"), ev("run.completed")))
    with pytest.raises(InputError) as refused:
        mutate_trace(folder / "c.json", folder / "t.jsonl")
    assert "required_but_forbidden" in str(refused.value)
    with pytest.raises(InputError) as failing:
        mutate_trace(folder / "c.json", folder / "t.jsonl", lint=False)
    assert "no-shell" in str(failing.value) and "required_but_forbidden" not in str(failing.value)


def test_an_invalid_trace_is_bad_input(tmp_path: Path) -> None:
    """Point 56: an invalid trace is bad input."""
    folder = example(tmp_path)
    (folder / "t.jsonl").write_text('{"seq": 2, "type": "run.start"}\n{"seq": 1, "type": "run.completed"}\n',
                                    encoding="utf-8")
    with pytest.raises(InputError):
        mutate_trace(folder / "c.json", folder / "t.jsonl")


# -- the report (point 66) ------------------------------------------------------------------------

def test_report_hashes_are_of_the_files_bytes(tmp_path: Path) -> None:
    """Point 66: contract_sha256 and trace_sha256 are SHA-256 of the files' bytes (as written, with
    their whitespace), and a trace given as bytes is hashed as such."""
    folder = example(tmp_path)
    report = mutate(folder)
    assert report["contract_sha256"] == sha256_file(folder / "c.json")
    assert report["trace_sha256"] == sha256_file(folder / "t.jsonl")
    data = b"# a comment\n" + (folder / "t.jsonl").read_bytes()
    from_bytes = msgspec.to_builtins(mutate_trace(folder / "c.json", data))
    check_report_form(from_bytes)
    assert from_bytes["trace_sha256"] == hashlib.sha256(data).hexdigest()
    assert ids(from_bytes) == EXAMPLE_IDS


# -- the CLI: JSON report and exit codes (points 56, 63, 66) --------------------------------------

def report_of(proc: Any) -> dict[str, Any]:
    assert proc.stdout.strip(), f"no report (exit {proc.returncode}): {proc.stderr}"
    report: dict[str, Any] = json.loads(proc.stdout)
    check_report_form(report)
    return report


def one_error_line(proc: Any) -> str:
    """Exit 2, nothing on stdout, one stderr line (point 56)."""
    assert (proc.returncode, proc.stdout) == (2, ""), (proc.returncode, proc.stdout, proc.stderr)
    lines: list[str] = proc.stderr.splitlines()
    assert len(lines) == 1, lines
    assert "Traceback" not in proc.stderr
    return lines[0]


def test_cli_json_report_and_min_score(tmp_path: Path, cli: Any) -> None:
    """Points 63, 66: the JSON report is the library's; exit 0 at a score not below --min-score, exit 1
    (report still printed) strictly below it."""
    folder = example(tmp_path)
    library = mutate(folder)
    library.pop("trace", None)
    proc = cli("mutate", "--contract", "c.json", "--trace", "t.jsonl", "--format", "json", "--min-score", "0.42")
    assert proc.returncode == 0, proc.stderr
    report = report_of(proc)
    report.pop("trace", None)
    assert report == library
    proc = cli("mutate", "--contract", "c.json", "--trace", "t.jsonl", "--format", "json", "--min-score", "0.43")
    assert proc.returncode == 1, proc.stderr
    assert report_of(proc)["score"] == pytest.approx(3 / 7)


def test_cli_null_score_fails_any_min_score(tmp_path: Path, cli: Any) -> None:
    """Point 63: --min-score gives exit 1 when the score is null, even --min-score 0."""
    write_case(tmp_path, [rule("no-shell", "deny_tool", tool="shell.*")], numbered(ev("telemetry.heartbeat")),
               version=1)
    proc = cli("mutate", "--contract", "c.json", "--trace", "t.jsonl", "--format", "json", "--min-score", "0")
    assert proc.returncode == 1, proc.stderr
    assert report_of(proc)["score"] is None


def test_cli_fail_on_fp_exits_1_with_the_report(tmp_path: Path, cli: Any) -> None:
    """Point 66: exit 1 with --fail-on-fp when false_positives is not empty; the report is printed."""
    window_case(tmp_path)
    proc = cli("mutate", "--contract", "c.json", "--trace", "t.jsonl", "--format", "json", "--fail-on-fp")
    assert proc.returncode == 1, proc.stderr
    assert report_of(proc)["false_positives"] == [{"rewrite": "heartbeat", "killed_by": ["budget", "window"]}]


def test_cli_trace_failing_the_contract_exit_2_naming_the_failing_rules(tmp_path: Path, cli: Any) -> None:
    """Point 56: exit 2, one stderr line naming the failing rule ids (not the passing one), nothing on
    stdout."""
    write_case(tmp_path, [rule("no-shell-zeta", "deny_tool", tool="shell.*"),
                          rule("passing-omega", "deny_tool", tool="rm"),
                          rule("must-talk-kappa", "require_event", match={"type": "agent.message"})],
               numbered(call("shell.exec", "c1"), ev("run.completed")), version=1)
    line = one_error_line(cli("mutate", "--contract", "c.json", "--trace", "t.jsonl", "--format", "json"))
    assert "no-shell-zeta" in line and "must-talk-kappa" in line, line
    assert "passing-omega" not in line, line


def test_cli_bad_input_exit_2(tmp_path: Path, cli: Any) -> None:
    """Point 56: a missing trace, an unknown --no-rewrite name, a --control T fails and a v2 contract with
    lint errors are exit 2 with one stderr line and nothing on stdout."""
    example(tmp_path)
    (tmp_path / "failing.json").write_text(json.dumps({"version": 1, "name": "f", "rules": [
        rule("no-refund-control", "deny_tool", tool="refund")]}), encoding="utf-8")
    one_error_line(cli("mutate", "--contract", "c.json", "--trace", "missing.jsonl", "--format", "json"))
    one_error_line(cli("mutate", "--contract", "c.json", "--trace", "t.jsonl", "--format", "json",
                       "--no-rewrite", "heartbeats"))
    line = one_error_line(cli("mutate", "--contract", "c.json", "--trace", "t.jsonl", "--format", "json",
                              "--control", "failing.json"))
    assert "no-refund-control" in line, line
    write_case(tmp_path / "lint", LINT_ERROR_RULES, numbered(call("shell.exec", "c1"), ev("run.completed")))
    line = one_error_line(cli("mutate", "--contract", "lint/c.json", "--trace", "lint/t.jsonl", "--format", "json"))
    assert "required_but_forbidden" in line, line
