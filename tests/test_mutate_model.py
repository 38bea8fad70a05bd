"""A reference model of `mutate` (spec v2 §6 with §10 points 56-66), compared with the CLI.

The model below is written from the spec text alone: it builds the candidate mutants (operator
table of §6, sites of point 57, values of point 58, moves of point 59, insertions of point 60),
orders, names and caps them (point 61), decides equivalence by the behaviour fingerprint (point
62), classifies and scores them (point 63), writes the auto control (point 64), applies the
false-positive rewrites (point 65) and predicts the report and exit code (point 66).

Whether a contract rejects a trace is `check`'s business, not `mutate`'s: the model asks the
library's `check_trace` (README "The library") for each mutant trace it builds itself.
"""
from __future__ import annotations

import copy
import fnmatch
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent_invariants import TraceError, check_trace, load_contract

from support import examples

Event = dict[str, Any]
Rule = dict[str, Any]

# -- the operator table of §6: (operators of the row, the "killed by" cell) -------------------------

TABLE: list[tuple[tuple[str, ...], str]] = [
    (("drop_call",), "tool_order, tool_calls, precedence, required_when"),
    (("drop_event",), "require_event, require_order, failure_handled"),
    (("swap_calls",), "tool_order, precedence"),
    (("change_arg",), "tool_args"),
    (("duplicate_call",), "tool_calls, distinct, retry_limit"),
    (("drop_approval", "move_approval_after", "rebind_approval"), "require_approval, approval_bound"),
    (("stop_earlier",), "stop_is_final"),
    (("flip_ok",), "failure_handled, successful counts"),
    (("drop_outcome", "degrade_outcome"), "completion rules, conditions"),
    (("inflate_retries",), "retry_limit, event_budget"),
    (("stale_result",), "$from_result rules"),
    (("misreport_output",), "output_match, output length"),
    (("inflate_duration",), "latency and run budgets"),
]
# Point 61 orders by the table's row; operators sharing a row keep the row's written order
# (spec silent on ties inside a row; the product does the same).
RANK = {op: (row, k) for row, (ops, _) in enumerate(TABLE) for k, op in enumerate(ops)}
HINT = {op: cell for ops, cell in TABLE for op in ops}


def canon(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def json_type(value: Any) -> str:
    """Point 58: the leaf's JSON type (boolean ≠ number)."""
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    return "string" if isinstance(value, str) else "other"


def leaves(node: Any, pointer: str = "") -> list[tuple[str, Any]]:
    """String, number and boolean leaves, depth-first in document order, with JSON Pointers."""
    if isinstance(node, dict):
        return [leaf for key, child in node.items() for leaf in leaves(child, f"{pointer}/{key}")]
    if isinstance(node, list):
        return [leaf for i, child in enumerate(node) for leaf in leaves(child, f"{pointer}/{i}")]
    return [(pointer, node)] if json_type(node) != "other" else []


def nodes(node: Any, pointer: str = "") -> list[tuple[str, Any]]:
    """Every node (pre-order, document order)."""
    found = [(pointer, node)]
    if isinstance(node, dict):
        for key, child in node.items():
            found += nodes(child, f"{pointer}/{key}")
    elif isinstance(node, list):
        for i, child in enumerate(node):
            found += nodes(child, f"{pointer}/{i}")
    return found


def set_at(doc: Any, pointer: str, value: Any) -> None:
    parts = pointer.split("/")[1:]
    target = doc
    for part in parts[:-1]:
        target = target[int(part)] if isinstance(target, list) else target[part]
    last = parts[-1]
    if isinstance(target, list):
        target[int(last)] = value
    else:
        target[last] = value


def get_at(doc: Any, pointer: str) -> Any:
    for part in pointer.split("/")[1:]:
        doc = doc[int(part)] if isinstance(doc, list) else doc[part]
    return doc


def pairs(trace: list[Event]) -> dict[int, int]:
    """§10 point 3: call position -> result position, one-to-one in trace order."""
    open_calls: list[int] = []
    paired: dict[int, int] = {}
    for i, event in enumerate(trace):
        if event.get("type") == "tool.call":
            open_calls.append(i)
        elif event.get("type") == "tool.result" and "call_id" in event:
            for j in reversed(open_calls):
                if trace[j].get("call_id") == event["call_id"]:
                    paired[j] = i
                    open_calls.remove(j)
                    break
    return paired


def replacement(trace: list[Event], value: Any) -> Any:
    """Point 58: the first value of the same JSON type that differs, over every call's args and
    result's result in trace order; else `~m`, +1 or negation."""
    for event in trace:
        source = event.get("args") if event.get("type") == "tool.call" else (
            event.get("result") if event.get("type") == "tool.result" else None)
        if source is None:
            continue
        for _, leaf in leaves(source):
            if json_type(leaf) == json_type(value) and leaf != value:
                return leaf
    return tweak(value)


def tweak(value: Any) -> Any:
    if isinstance(value, bool):
        return not value
    if isinstance(value, (int, float)):
        return value + 1
    return value + "~m"


Candidate = tuple[int, str, str | None, list[Event]]  # site position, operator, detail, mutant


def candidates(trace: list[Event]) -> list[Candidate]:
    """Points 57-61: every (site, operator, detail) with its mutant, before renumbering."""
    paired = pairs(trace)
    result_of = {r: c for c, r in paired.items()}
    found: list[Candidate] = []

    def add(site: int, op: str, detail: str | None, mutant: list[Event]) -> None:
        found.append((site, op, detail, mutant))

    def without(*positions: int) -> list[Event]:
        return [copy.deepcopy(e) for k, e in enumerate(trace) if k not in positions]

    def moved(order: list[int]) -> list[Event]:
        """Content in `order`, times kept by position (point 59)."""
        out = []
        for slot, k in enumerate(order):
            event = copy.deepcopy(trace[k])
            event.pop("time", None)
            if "time" in trace[slot]:
                event["time"] = trace[slot]["time"]
            out.append(event)
        return out

    def inserted(mutant: list[Event], at: int, new: list[Event]) -> list[Event]:
        """Point 59: inserted events copy the time of the event before them."""
        before = mutant[at - 1].get("time") if at > 0 else None
        for event in new:
            event.pop("time", None)
            if before is not None:
                event["time"] = before
        return mutant[:at] + new + mutant[at:]

    terminal = max((k for k, e in enumerate(trace) if e.get("type") in ("run.completed", "run.failed")),
                   default=None)
    for i, event in enumerate(trace):
        kind = event.get("type")
        if kind == "tool.call":
            partner = paired.get(i)
            add(i, "drop_call", None, without(i, *([partner] if partner is not None else [])))
            if "tool" in event and partner is not None:
                later = sorted((c, r) for c, r in paired.items()
                               if c > i and "tool" in trace[c] and trace[c]["tool"] != event["tool"])
                if later and partner < later[0][0]:
                    bc, br = later[0]
                    order = list(range(len(trace)))
                    order[i], order[partner], order[bc], order[br] = bc, br, i, partner
                    add(i, "swap_calls", None, moved(order))
            for pointer, leaf in leaves(event.get("args", {})):
                mutant = without()
                set_at(mutant[i]["args"], pointer, replacement(trace, leaf))
                add(i, "change_arg", pointer, mutant)
            last = partner if partner is not None else i
            copies = [copy.deepcopy(event)] + ([copy.deepcopy(trace[partner])] if partner is not None else [])
            for c in copies:  # spec silent on a call without call_id: it stays absent (as for inflate_retries)
                if "call_id" in event:
                    c["call_id"] = event["call_id"] + "~m"
            add(i, "duplicate_call", None, inserted(without(), last + 1, copies))
            if "tool" in event:
                new: list[Event] = []
                for n in (1, 2, 3):
                    call = copy.deepcopy(event)
                    failed: Event = {"type": "tool.result", "ok": False}
                    if "call_id" in event:
                        call["call_id"] = failed["call_id"] = f"{event['call_id']}~m{n}"
                    failed = {"seq": 0, **failed}
                    new += [call, failed]
                add(i, "inflate_retries", None, inserted(without(), i, new))
        elif kind == "approval.granted":
            add(i, "drop_approval", None, without(i))
            own = next((k for k in range(i + 1, len(trace)) if trace[k].get("type") == "tool.call" and all(
                trace[k].get(f) == event[f] for f in ("tool", "call_id", "approval_id") if f in event)), None)
            if own is not None:
                add(i, "move_approval_after", None,
                    moved([k for k in range(len(trace)) if k != i and k <= own] + [i]
                          + [k for k in range(own + 1, len(trace))]))
            if "call_id" in event:
                mutant = without()
                mutant[i]["call_id"] = event["call_id"] + "~m"
                add(i, "rebind_approval", "call_id", mutant)
            for pointer, leaf in leaves(event.get("args", {})):
                mutant = without()
                set_at(mutant[i]["args"], pointer, replacement(trace, leaf))
                add(i, "rebind_approval", pointer, mutant)
        elif kind == "control.stop":
            earlier = [k for k in range(i) if trace[k].get("type") == "tool.call"]
            if earlier:
                last_call = earlier[-1]
                add(i, "stop_earlier", None, moved(
                    list(range(last_call)) + [i] + [k for k in range(last_call, len(trace)) if k != i]))
        elif kind == "tool.result":
            mutant = without()
            mutant[i]["ok"] = not event.get("ok", True)
            add(i, "flip_ok", None, mutant)
            if i in result_of:
                tool = trace[result_of[i]].get("tool")
                mine = (canon(event.get("result")), event.get("ok"), "result" in event)
                for r in sorted((r for c, r in paired.items() if r < i and trace[c].get("tool") == tool),
                                reverse=True):
                    other = trace[r]
                    if (canon(other.get("result")), other.get("ok"), "result" in other) != mine:
                        mutant = without()
                        for field in ("result", "ok"):
                            mutant[i].pop(field, None)
                            if field in other:
                                mutant[i][field] = copy.deepcopy(other[field])
                        add(i, "stale_result", None, mutant)
                        break
        elif kind == "outcome.observed":
            add(i, "drop_outcome", None, without(i))
            for field, bad in (("verdict", "violated"), ("evidence_class", "self_attestation")):
                if event.get(field) != bad:
                    mutant = without()
                    mutant[i][field] = bad
                    add(i, "degrade_outcome", field, mutant)
        if kind != "tool.call" and not (kind == "tool.result" and i in result_of) \
                and kind not in ("approval.granted", "outcome.observed"):
            add(i, "drop_event", None, without(i))
        if i == terminal and "output" in event:
            for pointer, node in nodes(event["output"]):
                if isinstance(node, dict) or node is None or node == []:
                    continue
                mutant = without()
                changed = node[:-1] if isinstance(node, list) else tweak(node)
                if pointer == "":
                    mutant[i]["output"] = changed
                else:
                    set_at(mutant[i]["output"], pointer, changed)
                add(i, "misreport_output", pointer or None, mutant)
        duration = event.get("duration_ms")
        if isinstance(duration, (int, float)) and not isinstance(duration, bool) and duration > 0:
            mutant = without()
            mutant[i]["duration_ms"] = duration * 10
            add(i, "inflate_duration", None, mutant)

    def detail_key(detail: str | None) -> tuple[int, str]:
        return {None: (0, ""), "call_id": (0, ""), "verdict": (0, ""), "evidence_class": (1, "")}.get(
            detail, (2, ""))

    # Stable sort: position, table row; details were added in document order, call_id first.
    found.sort(key=lambda c: (c[0], RANK[c[1]], detail_key(c[2])))
    return [(site, op, detail, [{**e, "seq": 10 * (k + 1)} for k, e in enumerate(mutant)])
            for site, op, detail, mutant in found]


def glob(pattern: str, text: str) -> bool:
    return fnmatch.fnmatchcase(text, pattern.replace("[", "[[]"))


def fingerprint(trace: list[Event]) -> tuple[Any, ...]:
    """Point 62, items (1), (2), (3), (5); grounding (4) is compared by `same_behaviour`."""
    paired = pairs(trace)
    terminal = next((e for e in reversed(trace) if e.get("type") in ("run.completed", "run.failed")), None)
    status = "none" if terminal is None else terminal.get(
        "status", "completed" if terminal["type"] == "run.completed" else "failed")
    output = None if terminal is None or "output" not in terminal else ("output", canon(terminal["output"]))
    calls: Counter[tuple[Any, ...]] = Counter()
    for i, event in enumerate(trace):
        if event.get("type") != "tool.call":
            continue
        result = trace[paired[i]] if i in paired else {}
        stopped = any(e.get("type") == "control.stop" for e in trace[:i])
        grants = sorted(
            canon([g.get("approval_id"), g.get("approval_scope"), g.get("call_id"), g.get("args"), g.get("approver")])
            for g in trace[:i] if g.get("type") == "approval.granted" and g.get("approved") is not False
            and all(g[f] == event[f] for f in ("tool", "approval_id") if f in g and f in event))
        calls[(event.get("tool"), canon(event.get("args")), canon(result.get("ok", "<absent>")),
               canon(result.get("result", "<absent>")), canon(result.get("duration_ms", "<absent>")),
               stopped, tuple(grants))] += 1
    claim = next((k for k, e in enumerate(trace)
                  if e.get("claims_completion") is True or e.get("type") == "run.completed"), None)
    outcomes = Counter(
        (e.get("outcome_id"), e.get("verdict"), e.get("evidence_class"),
         "without" if claim is None else ("before" if k < claim else "after"))
        for k, e in enumerate(trace) if e.get("type") == "outcome.observed")
    # (5) "every other event": orphan results included, as point 57 counts them among drop_event's
    # "other" events.
    others = []
    count = 0
    answered = set(paired.values())
    for k, event in enumerate(trace):
        kind = event.get("type")
        if kind == "tool.call":
            count += 1
        if kind in ("tool.call", "approval.granted", "outcome.observed") or k in answered \
                or glob("telemetry.*", str(kind)):
            continue
        others.append(tuple(canon(event.get(f, "<absent>")) for f in
                            ("type", "reason", "status", "claims_completion", "confidence", "duration_ms"))
                      + (count,))
    return (output, status, sorted(calls.items(), key=repr), sorted(outcomes.items(), key=repr), others)


def grounding(trace: list[Event], reads: tuple[str, ...]) -> dict[tuple[Any, ...], set[tuple[Any, ...]]]:
    paired = pairs(trace)
    seen: Counter[tuple[Any, ...]] = Counter()
    done: set[tuple[Any, ...]] = set()
    sets: dict[tuple[Any, ...], set[tuple[Any, ...]]] = {}
    for i, event in enumerate(trace):
        if event.get("type") != "tool.call":
            continue
        key = (event.get("tool"), canon(event.get("args")))
        seen[key] += 1
        ident = key + (seen[key],)
        tool = event.get("tool")
        if tool is None or not any(glob(g, tool) for g in reads):
            sets[ident] = set(done)
        if i in paired and trace[paired[i]].get("ok") is not False:
            done.add(key)
    return sets


def same_behaviour(original: list[Event], mutant: list[Event], reads: tuple[str, ...]) -> bool:
    if fingerprint(original) != fingerprint(mutant):
        return False
    before, after = grounding(original, reads), grounding(mutant, reads)
    return before.keys() == after.keys() and all(after[k] >= before[k] for k in before)


def verdict(contract: Any, trace: list[Event] | bytes) -> tuple[list[str], bool] | None:
    """(rules with an error violation in contract order, any warning), or None when invalid."""
    try:
        report = check_trace(contract, trace)
    except TraceError:  # the mutant fails event validation
        return None
    errors = {v.rule_id for v in report.violations if v.severity == "error"}
    warned = any(v.severity == "warning" for v in report.violations)
    order = [r.rule_id for r in report.results]
    return [rid for rid in order if rid in errors], warned


def auto_control(trace: list[Event], name: str) -> dict[str, Any]:
    """Point 64."""
    status = fingerprint(trace)[1]
    tools: list[str] = []
    for event in trace:
        if event.get("type") == "tool.call" and "tool" in event and event["tool"] not in tools:
            tools.append(event["tool"])
    rules = [{"id": "control.status", "kind": "run_status", "equals": status}] + [
        {"id": f"control.calls.{k}", "kind": "tool_calls", "tool": t, "min": 1} for k, t in enumerate(tools, 1)]
    return {"version": 2, "name": f"{name} (control)", "rules": rules}


def rewrites(trace: list[Event]) -> dict[str, bytes]:
    """Point 65, without corpus."""
    def lines(evs: list[Event]) -> bytes:
        return "".join(json.dumps(e) + "\n" for e in evs).encode()

    def reverse(node: Any) -> Any:
        if isinstance(node, dict):
            return {k: reverse(node[k]) for k in reversed(list(node))}
        return [reverse(x) for x in node] if isinstance(node, list) else node

    beat: list[Event] = []
    for k, event in enumerate(trace, 1):
        beat.append(event)
        if k % 3 == 0:
            beat.append({"seq": 0, "type": "telemetry.heartbeat", **({"time": event["time"]} if "time" in event
                                                                       else {})})
    return {
        "renumber": lines([{**e, "seq": 1000 + 7 * i} for i, e in enumerate(trace)]),
        "heartbeat": lines([{**e, "seq": 10 * (i + 1)} for i, e in enumerate(beat)]),
        "comments": b"".join(b"# agent-invariants rewrite\n\n" + json.dumps(e).encode() + b"\n" for e in trace),
        "reorder_keys": lines([reverse(e) for e in trace]),
        "json_array": json.dumps(trace).encode(),
    }


def ratio(killed: int, survived: int) -> float | None:
    return None if killed + survived == 0 else killed / (killed + survived)


def model(document: dict[str, Any], trace: list[Event], *, max_mutants: int = 500,
          min_score: float | None = None, reads: tuple[str, ...] = ()) -> tuple[int, dict[str, Any]]:
    """Points 61-66: (exit code, the report's modelled fields)."""
    contract = load_contract(document)
    control = load_contract(auto_control(trace, document["name"]))
    found = candidates(trace)
    if len(found) > max_mutants:
        found = [found[i * len(found) // max_mutants] for i in range(max_mutants)]
    mutants: list[dict[str, Any]] = []
    counts = Counter[str]()
    control_counts = Counter[str]()
    for site, op, detail, mutant in found:
        ident = f"{op}:{trace[site]['seq']}" + (f":{detail}" if detail is not None else "")
        outcome = verdict(contract, mutant)
        entry: dict[str, Any] = {"id": ident, "operator": op}
        if outcome is None:
            entry |= {"status": "invalid", "killed_by": []}
        elif same_behaviour(trace, mutant, reads):
            entry |= {"status": "equivalent", "killed_by": outcome[0]}
            if outcome[0]:
                entry["over_block"] = True
                counts["over_block"] += 1
        else:
            entry |= {"status": "killed" if outcome[0] else "survived", "killed_by": outcome[0]}
            if not outcome[0] and outcome[1]:
                entry["warned"] = True
                counts["warned"] += 1
            control_outcome = verdict(control, mutant)
            assert control_outcome is not None
            control_counts["killed" if control_outcome[0] else "survived"] += 1
        counts[entry["status"]] += 1
        mutants.append(entry)
    score = ratio(counts["killed"], counts["survived"])
    control_score = ratio(control_counts["killed"], control_counts["survived"])
    false_positives = []
    for name, data in rewrites(trace).items():
        result = verdict(contract, data)
        if result is None or result[0]:
            false_positives.append({"rewrite": name, "killed_by": result[0] if result else []})
    report = {
        "schema": "agent-invariants/mutate/v1", "score": score,
        **{k: counts[k] for k in ("killed", "survived", "warned", "equivalent", "over_block", "invalid")},
        "mutants": mutants,
        "survivors": [{"id": m["id"], "hint": HINT[m["operator"]]} for m in mutants if m["status"] == "survived"],
        "control": {"auto": True, "score": control_score, "killed": control_counts["killed"],
                    "survived": control_counts["survived"],
                    "too_easy": bool(control_score and score is not None and control_score >= score / 2)},
        "false_positives": false_positives,
    }
    code = 1 if min_score is not None and (score is None or score < min_score) else 0
    return code, report


def comparable(report: dict[str, Any]) -> dict[str, Any]:
    """The product's report without what the model leaves to other tests (hashes, trace name)."""
    kept = {k: v for k, v in report.items() if k not in ("contract_sha256", "trace_sha256", "trace")}
    kept["control"] = {k: v for k, v in report["control"].items() if k != "contract_sha256"}
    kept["mutants"] = [{k: v for k, v in m.items() if k not in ("warned", "over_block") or v}
                       for m in report["mutants"]]
    return kept


def run_mutate(tmp_path: Path, document: dict[str, Any], trace: list[Event],
               *extra: str) -> tuple[int, dict[str, Any] | None, str]:
    from conftest import Cli

    (tmp_path / "c.json").write_text(json.dumps(document), encoding="utf-8")
    (tmp_path / "t.jsonl").write_text("".join(json.dumps(e) + "\n" for e in trace), encoding="utf-8")
    result = Cli(tmp_path)("mutate", "--contract", "c.json", "--trace", "t.jsonl", "--format", "json", *extra)
    report = json.loads(result.stdout) if result.stdout.strip() else None
    return result.returncode, report, result.stderr


def assert_matches(tmp_path: Path, document: dict[str, Any], trace: list[Event], *extra: str,
                   **options: Any) -> dict[str, Any]:
    code, report, stderr = run_mutate(tmp_path, document, trace, *extra)
    want_code, want = model(document, trace, **options)
    assert report is not None, stderr
    assert comparable(report) == want
    assert code == want_code
    return report


def contract_of(*rules: Rule) -> dict[str, Any]:
    return {"version": 2, "name": "spec", "rules": list(rules)}


def ids(report: dict[str, Any]) -> dict[str, str]:
    return {m["id"]: m["status"] for m in report["mutants"]}


# -- hand-written cases: one per operator row (a site it must hit, one it must not) ----------------

def pair(k: int, tool: str, args: dict[str, Any], ok: bool = True, result: Any = 1) -> list[Event]:
    return [{"type": "tool.call", "tool": tool, "call_id": f"c{k}", "args": args},
            {"type": "tool.result", "call_id": f"c{k}", "ok": ok, "result": result}]


def numbered(*evs: Event) -> list[Event]:
    return [{"seq": 10 * (i + 1), **e} for i, e in enumerate(evs)]


DONE: Event = {"type": "run.completed", "output": {"ok": True}}


def test_drop_call_hits_every_call_and_its_result(tmp_path: Path) -> None:
    """Point 57: drop_call sites are every tool.call; its paired result goes too (§6 row 1)."""
    trace = numbered(*pair(1, "a", {}), *pair(2, "b", {}), DONE)
    report = assert_matches(tmp_path, contract_of({"id": "two", "kind": "tool_calls", "tool": "b", "min": 1}), trace)
    assert ids(report)["drop_call:30"] == "killed" and ids(report)["drop_call:10"] == "survived"
    assert "drop_call:20" not in ids(report)  # a result is no drop_call site


def test_drop_event_skips_calls_results_grants_outcomes(tmp_path: Path) -> None:
    """Point 57: drop_event sites exclude tool.call, paired tool.result, approval.granted and
    outcome.observed; the terminal, messages and run.start are sites."""
    trace = numbered({"type": "run.start"}, {"type": "approval.granted", "tool": "a"}, *pair(1, "a", {}),
                     {"type": "outcome.observed", "outcome_id": "o", "verdict": "satisfied",
                      "evidence_class": "externally_observed"},
                     {"type": "agent.message"}, DONE)
    report = assert_matches(tmp_path, contract_of(
        {"id": "msg", "kind": "require_event", "match": {"type": "agent.message"}}), trace)
    drops = [m for m in ids(report) if m.startswith("drop_event:")]
    assert drops == ["drop_event:10", "drop_event:60", "drop_event:70"]
    assert ids(report)["drop_event:60"] == "killed"


def test_swap_calls_needs_a_later_pair_of_another_tool(tmp_path: Path) -> None:
    """Point 59: A is swapped with the nearest later complete pair of a different tool; the
    last pair and pairs followed only by their own tool have no swap."""
    trace = numbered(*pair(1, "a", {}), *pair(2, "a", {}), *pair(3, "b", {}), DONE)
    report = assert_matches(tmp_path, contract_of({"id": "ord", "kind": "require_order",
                                                   "before": {"tool": "a"}, "after": {"tool": "b"}}), trace)
    swaps = [m for m in ids(report) if m.startswith("swap_calls:")]
    assert swaps == ["swap_calls:10", "swap_calls:30"]


def test_swap_of_a_failed_call_is_equivalent(tmp_path: Path) -> None:
    """Point 62 (4): a failed call grounds nothing, so moving it after the other write keeps
    every grounding set a superset: equivalent."""
    trace = numbered(*pair(1, "a", {}, ok=False), *pair(2, "b", {}), DONE)
    report = assert_matches(tmp_path, contract_of({"id": "cap", "kind": "tool_calls", "tool": "a", "max": 3}), trace)
    assert ids(report)["swap_calls:10"] == "equivalent"


def test_reads_make_a_swap_of_reads_equivalent(tmp_path: Path) -> None:
    """§6: "Declaring read-only tools lets swaps of independent reads count as equivalent"."""
    trace = numbered(*pair(1, "r1", {}), *pair(2, "r2", {}), DONE)
    document = contract_of({"id": "cap", "kind": "tool_calls", "tool": "r1", "max": 3})
    assert ids(assert_matches(tmp_path, document, trace))["swap_calls:10"] == "survived"
    report = assert_matches(tmp_path, document, trace, "--reads", "r*", reads=("r*",))
    assert ids(report)["swap_calls:10"] == "equivalent"


def test_change_arg_takes_the_first_other_value_of_the_same_type(tmp_path: Path) -> None:
    """Point 58: the first value, in trace order over args and results, of the leaf's JSON type
    that differs; boolean ≠ number; else ~m / +1 / negation; null leaves are no sites."""
    trace = numbered(*pair(1, "a", {"n": 1, "s": "x", "f": True, "z": None}, result={"n": 7}), DONE)
    report = assert_matches(tmp_path, contract_of({"id": "cap", "kind": "tool_calls", "tool": "a", "max": 1}), trace)
    assert [m for m in ids(report) if m.startswith("change_arg")] == [
        "change_arg:10:/n", "change_arg:10:/s", "change_arg:10:/f"]


@pytest.mark.parametrize(("ident", "field", "want"), [
    ("change_arg:10:/n", "n", 7), ("change_arg:10:/s", "s", "x~m"), ("change_arg:10:/f", "f", False)])
def test_change_arg_values(tmp_path: Path, ident: str, field: str, want: Any) -> None:
    """Point 58 values, read with `--show-mutant` (the product's way to print one mutant)."""
    from conftest import Cli

    trace = numbered(*pair(1, "a", {"n": 1, "s": "x", "f": True}, result={"n": 7, "b": 1}), DONE)
    run_mutate(tmp_path, contract_of({"id": "cap", "kind": "tool_calls", "tool": "a", "max": 1}), trace)
    shown = Cli(tmp_path)("mutate", "-c", "c.json", "-t", "t.jsonl", "--show-mutant", ident)
    events = [json.loads(line) for line in shown.stdout.splitlines() if line.strip()]
    assert events[0]["args"][field] == want
    assert [e["seq"] for e in events] == [10, 20, 30]


def test_duplicate_call_and_inflate_retries(tmp_path: Path) -> None:
    """Point 60: duplicate_call at every call; inflate_retries at every call with a tool; a
    tool-less call gets no inflate_retries."""
    trace = numbered(*pair(1, "a", {"k": 1}), {"type": "tool.call", "call_id": "c9"},
                     {"type": "tool.result", "call_id": "c9", "ok": True}, DONE)
    report = assert_matches(tmp_path, contract_of(
        {"id": "retry", "kind": "retry_limit", "max_attempts": 1, "group_by": "tool"}), trace)
    assert ids(report)["duplicate_call:10"] == "killed" and ids(report)["inflate_retries:10"] == "killed"
    assert "duplicate_call:30" in ids(report) and "inflate_retries:30" not in ids(report)


def test_approval_operators(tmp_path: Path) -> None:
    """Points 57-58: drop_approval at every grant, move_approval_after when it has an own call,
    rebind_approval at its call_id then each args leaf (call_id first)."""
    trace = numbered({"type": "approval.granted", "tool": "pay", "call_id": "c1", "args": {"amount": 5}},
                     {"type": "approval.granted", "tool": "other"},
                     *pair(1, "pay", {"amount": 5}, result=9), DONE)
    report = assert_matches(tmp_path, contract_of({"id": "appr", "kind": "require_approval", "tool": "pay"}), trace)
    assert [m for m in ids(report) if ":10" in m] == [
        "drop_approval:10", "move_approval_after:10", "rebind_approval:10:call_id", "rebind_approval:10:/amount"]
    assert ids(report)["drop_approval:20"] == "equivalent"  # it covers no call: point 62 (2)
    assert "move_approval_after:20" not in ids(report)


def test_stop_earlier_needs_an_earlier_call(tmp_path: Path) -> None:
    """Point 57/59: stop_earlier at a control.stop with an earlier tool.call."""
    trace = numbered({"type": "control.stop", "reason": "x"}, *pair(1, "a", {}), {"type": "control.stop"},
                     {"type": "run.failed"})
    document = contract_of({"id": "final", "kind": "tool_calls", "tool": "a", "max": 2})
    report = assert_matches(tmp_path, document, trace)
    assert "stop_earlier:10" not in ids(report) and "stop_earlier:40" in ids(report)


def test_flip_ok_and_outcome_operators(tmp_path: Path) -> None:
    """Point 57: flip_ok at every tool.result; drop_outcome and degrade_outcome at every
    outcome, degrade skipped where already violated / self_attestation (verdict first)."""
    trace = numbered(*pair(1, "a", {}),
                     {"type": "outcome.observed", "outcome_id": "o", "verdict": "satisfied",
                      "evidence_class": "externally_observed"},
                     {"type": "outcome.observed", "outcome_id": "p", "verdict": "violated",
                      "evidence_class": "self_attestation"}, DONE)
    report = assert_matches(tmp_path, contract_of({"id": "done", "kind": "completion_requires_outcome"}), trace)
    assert [m for m in ids(report) if m.split(":")[1] in ("30", "40")] == [
        "drop_outcome:30", "degrade_outcome:30:verdict", "degrade_outcome:30:evidence_class", "drop_outcome:40"]
    assert ids(report)["flip_ok:20"] == "survived" and ids(report)["degrade_outcome:30:verdict"] == "killed"


def test_stale_result_needs_an_earlier_different_result(tmp_path: Path) -> None:
    """Point 57: stale_result at a paired result whose tool has an earlier paired result with a
    different (result, ok)."""
    trace = numbered(*pair(1, "a", {}, result=1), *pair(2, "a", {}, result=1), *pair(3, "a", {}, result=2), DONE)
    report = assert_matches(tmp_path, contract_of({"id": "cap", "kind": "tool_calls", "tool": "a", "max": 3}), trace)
    assert [m for m in ids(report) if m.startswith("stale")] == ["stale_result:60"]


def test_misreport_output_and_inflate_duration(tmp_path: Path) -> None:
    """Point 57/58: misreport_output at every array (non-empty), boolean, number and string of
    the terminal's output (root detail omitted); inflate_duration where duration_ms > 0."""
    trace = numbered({"type": "tool.call", "tool": "a", "call_id": "c1"},
                     {"type": "tool.result", "call_id": "c1", "ok": True, "duration_ms": 0},
                     {"type": "telemetry.x", "duration_ms": 3},
                     {"type": "run.completed", "duration_ms": 2, "output": {"l": [], "m": [1], "n": None}})
    report = assert_matches(tmp_path, contract_of({"id": "cap", "kind": "tool_calls", "tool": "a", "max": 3}), trace)
    assert [m for m in ids(report) if m.startswith(("misreport", "inflate_d"))] == [
        "inflate_duration:30", "misreport_output:40:/m", "misreport_output:40:/m/0", "inflate_duration:40"]
    assert ids(report)["inflate_duration:30"] == "equivalent"  # telemetry is outside the fingerprint


def test_root_output_detail_is_omitted(tmp_path: Path) -> None:
    """Point 61: the detail is omitted for the output's root."""
    trace = numbered(*pair(1, "a", {}), {"type": "run.completed", "output": "done"})
    report = assert_matches(tmp_path, contract_of({"id": "cap", "kind": "tool_calls", "tool": "a", "max": 3}), trace)
    assert "misreport_output:30" in ids(report)


def test_over_block_is_flagged(tmp_path: Path) -> None:
    """Point 63: an equivalent mutant still rejected is `over_block: true` and counted."""
    trace = numbered(*pair(1, "a", {}), {"type": "telemetry.t"}, DONE)
    report = assert_matches(tmp_path, contract_of(
        {"id": "beat", "kind": "require_event", "match": {"type": "telemetry.*"}}), trace)
    assert report["over_block"] == 1 and ids(report)["drop_event:30"] == "equivalent"


def test_invalid_mutant_is_listed(tmp_path: Path) -> None:
    """Point 63: a mutant failing event validation (call_id over 500 chars after `~m`) is invalid."""
    long_id = "x" * 499
    trace = numbered({"type": "tool.call", "tool": "a", "call_id": long_id},
                     {"type": "tool.result", "call_id": long_id, "ok": True}, DONE)
    report = assert_matches(tmp_path, contract_of({"id": "cap", "kind": "tool_calls", "tool": "a", "max": 3}), trace)
    assert ids(report)["duplicate_call:10"] == "invalid" and report["invalid"] >= 1


@pytest.mark.parametrize("cap", [1, 3, 7])
def test_max_mutants_keeps_evenly_spaced_candidates(tmp_path: Path, cap: int) -> None:
    """Point 61: with N > K candidates the kept ones are at index ⌊i·N/K⌋."""
    trace = numbered(*pair(1, "a", {"x": 1}), *pair(2, "b", {"y": "s"}), DONE)
    document = contract_of({"id": "cap", "kind": "tool_calls", "tool": "a", "max": 1})
    report = assert_matches(tmp_path, document, trace, "--max-mutants", str(cap), max_mutants=cap)
    assert len(report["mutants"]) == cap


def test_min_score_exit_one(tmp_path: Path) -> None:
    """Point 63/66: `--min-score X` gives exit 1 when the score is strictly below X."""
    trace = numbered(*pair(1, "a", {}), DONE)
    document = contract_of({"id": "cap", "kind": "tool_calls", "tool": "a", "max": 1})
    report = assert_matches(tmp_path, document, trace, "--min-score", "1", min_score=1.0)
    assert report["score"] is not None and report["score"] < 1


def test_section_6_example(tmp_path: Path) -> None:
    """§6 Example: approval_bound on refund; grant (10), call (20), result (30), run.completed
    (40): drop_approval:10 is killed, flip_ok:30 survives with its row's hint; the control kills
    neither."""
    trace = numbered({"type": "approval.granted", "tool": "refund", "approval_id": "a1"},
                     {"type": "tool.call", "tool": "refund", "call_id": "r1", "approval_id": "a1",
                      "args": {"amount": 5}},
                     {"type": "tool.result", "call_id": "r1", "ok": True, "result": {"id": 1}},
                     {"type": "run.completed"})
    report = assert_matches(tmp_path, contract_of({"id": "bound", "kind": "approval_bound", "tool": "refund"}),
                            trace)
    assert ids(report)["drop_approval:10"] == "killed" and ids(report)["flip_ok:30"] == "survived"
    assert {"id": "flip_ok:30", "hint": "failure_handled, successful counts"} in report["survivors"]
    control = load_contract(auto_control(trace, "spec"))
    for ident in ("drop_approval:10", "flip_ok:30"):
        mutant = next(m for s, op, d, m in candidates(trace) if f"{op}:{trace[s]['seq']}" == ident)
        assert verdict(control, mutant) == ([], False)


def test_failing_trace_is_bad_input(tmp_path: Path) -> None:
    """§6 "T must pass C (otherwise exit 2)"; point 56: one stderr line naming the rule, no stdout."""
    trace = numbered(*pair(1, "a", {}), *pair(2, "a", {}), DONE)
    code, report, stderr = run_mutate(tmp_path, contract_of(
        {"id": "only-one", "kind": "tool_calls", "tool": "a", "max": 1}), trace)
    assert (code, report) == (2, None)
    assert len(stderr.splitlines()) == 1 and "only-one" in stderr


def test_unknown_no_rewrite_is_bad_input(tmp_path: Path) -> None:
    """Point 56: an unknown `--no-rewrite` name exits 2 with nothing on stdout."""
    code, report, _ = run_mutate(tmp_path, contract_of({"id": "cap", "kind": "tool_calls", "tool": "a", "max": 1}),
                                 numbered(*pair(1, "a", {}), DONE), "--no-rewrite", "bogus")
    assert (code, report) == (2, None)


# -- the property test --------------------------------------------------------------------------

TOOLS = ("read", "write", "pay")
scalars = st.one_of(st.integers(0, 3), st.sampled_from(["a", "b"]), st.booleans())
args_st = st.dictionaries(st.sampled_from(["id", "n", "flag"]), scalars, max_size=2)


@st.composite
def traces(draw: st.DrawFn) -> list[Event]:
    """5..20 events: pairs (a result right after its call), grants, stops, outcomes, messages,
    telemetry, then a terminal with an output. Results always follow their call directly: point
    59's "nearest later complete pair B of a different tool, when A's result precedes B's call"
    reads two ways when pairs interleave (B the nearest pair, dropped when it starts before A's
    result ends, or the nearest pair that starts after it), so interleaving is not generated."""
    body: list[Event] = []
    if draw(st.booleans()):
        body.append({"type": "run.start"})
    k = 0
    while len(body) < draw(st.integers(4, 18)):
        choice = draw(st.sampled_from(["pair", "pair", "pair", "grant", "stop", "outcome", "msg", "tele"]))
        if choice == "pair":
            k += 1
            result: Event = {"type": "tool.result", "call_id": f"c{k}", "ok": draw(st.booleans()),
                             "result": draw(st.one_of(st.integers(0, 2), st.sampled_from(["r", "s"]), st.none(),
                                                      st.fixed_dictionaries({"v": st.integers(0, 2)})))}
            if draw(st.booleans()):
                result["duration_ms"] = draw(st.integers(0, 5))
            if draw(st.integers(0, 4)) == 0:
                del result["ok"]
            call: Event = {"type": "tool.call", "tool": draw(st.sampled_from(TOOLS)), "call_id": f"c{k}",
                           "args": draw(args_st)}
            if draw(st.integers(0, 3)) == 0:
                call["approval_id"] = draw(st.sampled_from(["p1", "p2"]))
            body += [call, result]
        elif choice == "grant":
            grant: Event = {"type": "approval.granted", "args": draw(args_st)}
            for field, values in (("tool", TOOLS), ("approval_id", ("p1", "p2")), ("approval_scope", ("s",)),
                                  ("approver", ("ann", "bob")), ("call_id", (f"c{k + 1}", f"c{k + 2}"))):
                if draw(st.booleans()):
                    grant[field] = draw(st.sampled_from(values))
            if draw(st.integers(0, 3)) == 0:
                grant["approved"] = False
            body.append(grant)
        elif choice == "stop":
            body.append({"type": "control.stop", "reason": "user"})
        elif choice == "outcome":
            body.append({"type": "outcome.observed", "outcome_id": draw(st.sampled_from(["o1", "o2"])),
                         "verdict": draw(st.sampled_from(["satisfied", "violated", "unknown"])),
                         "evidence_class": draw(st.sampled_from(["externally_observed", "self_attestation"]))})
        elif choice == "msg":
            message: Event = {"type": "agent.message"}
            if draw(st.integers(0, 2)) == 0:
                message |= {"claims_completion": True, "confidence": draw(st.sampled_from([0.5, 1]))}
            body.append(message)
        else:
            body.append({"type": "telemetry.tick", **({"duration_ms": 2} if draw(st.booleans()) else {})})
    output = draw(st.one_of(
        st.fixed_dictionaries({"items": st.lists(st.integers(0, 2), max_size=2), "done": st.booleans(),
                               "note": st.sampled_from(["x", "y"])}),
        st.lists(st.one_of(st.lists(st.booleans(), max_size=2), st.none()), max_size=2),
        st.sampled_from(["text", 3, None])))
    terminal: Event = {"type": draw(st.sampled_from(["run.completed", "run.failed"])), "output": output}
    if draw(st.booleans()):
        terminal["duration_ms"] = draw(st.integers(1, 9))
    if draw(st.booleans()):
        terminal["status"] = draw(st.sampled_from(["completed", "awaiting_approval"]))
    if draw(st.integers(0, 3)) == 0:  # an earlier terminal: the last one is the terminal
        body.insert(draw(st.integers(0, len(body))), {"type": "run.completed", "output": {"early": [1]}})
    steps = draw(st.lists(st.integers(1, 4), min_size=len(body) + 1, max_size=len(body) + 1))
    # ids name the input's seq (point 61), so the input's seqs are irregular: 0, then gaps of 1..4
    return [{"seq": sum(steps[:k]) - steps[0], **e} for k, e in enumerate([*body, terminal], 1)]


def rule_pool(trace: list[Event]) -> list[Rule]:
    pool: list[Rule] = []
    for tool in TOOLS:
        n = sum(1 for e in trace if e.get("type") == "tool.call" and e.get("tool") == tool)
        if n == 0:
            continue
        pool += [{"kind": "tool_calls", "tool": tool, "max": n}, {"kind": "tool_calls", "tool": tool, "min": n},
                 {"kind": "require_approval", "tool": tool},
                 {"kind": "approval_bound", "tool": tool, "bind": "args"},
                 {"kind": "approval_bound", "tool": tool, "bind": "call_id", "one_use": False},
                 {"kind": "retry_limit", "tool": tool, "max_attempts": max(n, 1), "group_by": "tool"},
                 {"kind": "deny_event", "match": {"tool": tool, "ok": False}}]
    pool += [{"kind": "event_budget", "max_events": len(trace)},
             {"kind": "event_budget", "max_tool_failures": sum(1 for e in trace if e.get("ok") is False)},
             {"kind": "require_event", "match": {"type": "agent.message"}},
             {"kind": "require_event", "match": {"type": "control.stop"}},
             {"kind": "require_order", "before": {"type": "approval.granted"}, "after": {"tool": "pay"}},
             {"kind": "require_approval", "tool": "*", "scope": "s"},
             {"kind": "confidence_requires_outcome", "threshold": 0.8},
             {"kind": "completion_requires_outcome", "completion_types": ["run.*"], "outcome_id": "o1"},
             {"kind": "stop_is_final"}, {"kind": "completion_requires_outcome"}, {"kind": "tool_result_required"},
             {"kind": "run_status", "equals": fingerprint(trace)[1]}]
    return pool


@st.composite
def cases(draw: st.DrawFn) -> tuple[dict[str, Any], list[Event]]:
    trace = draw(traces())
    chosen = draw(st.lists(st.sampled_from(rule_pool(trace)), min_size=3, max_size=6, unique_by=canon))
    rules = []
    for n, rule in enumerate(chosen):
        rule = {"id": f"r{n}", **rule}
        if draw(st.booleans()) and n % 2:
            rule["severity"] = "warning"
        outcome = verdict(load_contract(contract_of(rule)), trace)
        if outcome is not None and not outcome[0] and not outcome[1]:
            rules.append(rule)
    rules.append({"id": "budget", "kind": "event_budget", "max_events": 1000})
    version = draw(st.sampled_from([2, 2, 1]))
    if version == 1:  # a version-1 contract holds only the twelve v1 kinds
        rules = [r for r in rules if r["kind"] not in ("tool_calls", "run_status", "approval_bound")]
    return {"version": version, "name": "spec", "rules": rules}, trace


@settings(max_examples=examples(20), deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(case=cases(), reads=st.sampled_from([(), ("read",), ("read", "pay")]),
       cap=st.sampled_from([500, 500, 7]), min_score=st.sampled_from([None, 0.5]))
def test_mutate_agrees_with_the_model(tmp_path: Path, case: tuple[dict[str, Any], list[Event]],
                                      reads: tuple[str, ...], cap: int, min_score: float | None) -> None:
    """§6 + points 57-66: mutants, statuses, score, control, false positives and exit code.
    Left out of generation: interleaved call/result pairs (see the swap_calls note in
    `traces`), tool-less calls and calls without call_id, orphan results."""
    document, trace = case
    extra = [arg for glob_ in reads for arg in ("--reads", glob_)] + ["--max-mutants", str(cap)]
    if min_score is not None:
        extra += ["--min-score", str(min_score)]
    assert_matches(tmp_path, document, trace, "--no-lint", *extra, reads=reads, max_mutants=cap,
                   min_score=min_score)


# -- times, positions and inserted copies, read with `--show-mutant` -------------------------------

def timed(*evs: Event) -> list[Event]:
    return [{"seq": 10 * (i + 1), "time": f"2026-01-01T00:00:0{i}Z", **e} for i, e in enumerate(evs)]


TIMED = timed({"type": "approval.granted", "tool": "a", "call_id": "c1"}, *pair(1, "a", {"k": 1}),
              *pair(2, "b", {"k": 2}), {"type": "control.stop"}, DONE)


@pytest.mark.parametrize("ident", [
    "swap_calls:20", "move_approval_after:10", "stop_earlier:60", "duplicate_call:20", "inflate_retries:20",
    "drop_call:20", "drop_event:60"])
def test_mutant_trace_matches_the_model(tmp_path: Path, ident: str) -> None:
    """Points 59-60: seq 10, 20, … by position; moving operators keep the times by position, drop
    operators keep each event's own time, inserted events copy the time of the event before."""
    from conftest import Cli

    document = contract_of({"id": "cap", "kind": "tool_calls", "tool": "a", "max": 1})
    run_mutate(tmp_path, document, TIMED)
    shown = Cli(tmp_path)("mutate", "-c", "c.json", "-t", "t.jsonl", "--show-mutant", ident)
    got = [json.loads(line) for line in shown.stdout.splitlines() if line.strip()]
    want = {f"{op}:{TIMED[site]['seq']}" + (f":{d}" if d else ""): m for site, op, d, m in candidates(TIMED)}
    assert got == want[ident]


# -- the control, the score, false positives, exit codes -------------------------------------------

def test_explicit_control_is_not_auto(tmp_path: Path) -> None:
    """§6 / point 64: `--control` names the control; it is scored on the same mutants."""
    trace = numbered(*pair(1, "a", {}), DONE)
    (tmp_path / "c0.json").write_text(json.dumps(contract_of({"id": "st", "kind": "run_status",
                                                              "equals": "completed"})), encoding="utf-8")
    code, report, _ = run_mutate(tmp_path, contract_of({"id": "cap", "kind": "tool_calls", "tool": "a", "max": 1}),
                                 trace, "--control", "c0.json")
    assert code == 0 and report is not None
    assert report["control"]["auto"] is False
    # drop_event:30 (the terminal) is killed by the status rule; nothing else is
    assert (report["control"]["killed"], report["control"]["killed"] + report["control"]["survived"]) == (
        1, report["killed"] + report["survived"])


def test_control_that_fails_the_trace_is_bad_input(tmp_path: Path) -> None:
    """Point 56: a `--control` that T does not pass exits 2, nothing on stdout."""
    (tmp_path / "c0.json").write_text(json.dumps(contract_of({"id": "st", "kind": "run_status",
                                                              "equals": "failed"})), encoding="utf-8")
    code, report, stderr = run_mutate(tmp_path, contract_of({"id": "cap", "kind": "tool_calls", "tool": "a",
                                                             "max": 1}), numbered(*pair(1, "a", {}), DONE),
                                      "--control", "c0.json")
    assert (code, report) == (2, None) and len(stderr.splitlines()) == 1


def test_null_score_fails_min_score(tmp_path: Path) -> None:
    """Point 63: score is null when nothing is scorable; `--min-score` then exits 1."""
    trace = numbered({"type": "telemetry.tick"})
    document = contract_of({"id": "budget", "kind": "event_budget", "max_events": 10})
    report = assert_matches(tmp_path, document, trace, "--min-score", "0", min_score=0.0)
    assert report["score"] is None and report["mutants"] == [
        {"id": "drop_event:10", "operator": "drop_event", "status": "equivalent", "killed_by": []}]


WINDOWED = contract_of({"id": "near", "kind": "require_approval", "tool": "a", "within_events": 1})
WINDOW_TRACE = numbered({"type": "agent.message"}, {"type": "agent.message"},
                        {"type": "approval.granted"}, *pair(1, "a", {}), DONE)


def test_heartbeat_rewrite_is_a_false_positive(tmp_path: Path) -> None:
    """Point 65: a heartbeat after the 3rd event splits grant and call; the failure names the
    rule ("typically within_events"); exit stays 0 without `--fail-on-fp`."""
    report = assert_matches(tmp_path, WINDOWED, WINDOW_TRACE)
    assert report["false_positives"] == [{"rewrite": "heartbeat", "killed_by": ["near"]}]


def test_fail_on_fp_exits_one(tmp_path: Path) -> None:
    """Point 66: exit 1 when `--fail-on-fp` is given and false_positives is not empty."""
    code, report, _ = run_mutate(tmp_path, WINDOWED, WINDOW_TRACE, "--fail-on-fp")
    assert code == 1 and report is not None and report["false_positives"]


def test_no_rewrite_leaves_the_rewrite_out(tmp_path: Path) -> None:
    """Point 65: `--no-rewrite NAME` (repeatable) removes one rewrite."""
    code, report, _ = run_mutate(tmp_path, WINDOWED, WINDOW_TRACE, "--fail-on-fp", "--no-rewrite", "heartbeat",
                                 "--no-rewrite", "comments")
    assert code == 0 and report is not None and report["false_positives"] == []


def test_corpus_failures_name_the_file(tmp_path: Path) -> None:
    """Point 65: `corpus` checks each *.jsonl / *.json of `--corpus`, sorted by name, one entry
    per failing file: `{rewrite, file?, killed_by}`."""
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    good = "".join(json.dumps(e) + "\n" for e in numbered(*pair(1, "a", {}), DONE))
    bad = "".join(json.dumps(e) + "\n" for e in numbered(*pair(1, "a", {}), *pair(2, "a", {}), DONE))
    (corpus / "b.jsonl").write_text(bad, encoding="utf-8")
    (corpus / "a.json").write_text(json.dumps(numbered(*pair(1, "a", {}), *pair(2, "a", {}))), encoding="utf-8")
    (corpus / "c.jsonl").write_text(good, encoding="utf-8")
    (corpus / "d.txt").write_text(bad, encoding="utf-8")
    code, report, _ = run_mutate(tmp_path, contract_of({"id": "cap", "kind": "tool_calls", "tool": "a", "max": 1}),
                                 numbered(*pair(1, "a", {}), DONE), "--corpus", "corpus")
    assert code == 0 and report is not None
    assert [(f["rewrite"], Path(f["file"]).name, f["killed_by"]) for f in report["false_positives"]] == [
        ("corpus", "a.json", ["cap"]), ("corpus", "b.jsonl", ["cap"])]


def test_a_corpus_link_that_leads_nowhere_is_bad_input(tmp_path: Path) -> None:
    """Found by the fifth hunt: a dangling link named like a trace was left out of the corpus
    without a word; it is a corpus file that cannot be read, exit 2 naming it."""
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "a.jsonl").write_text("".join(json.dumps(e) + "\n" for e in numbered(*pair(1, "a", {}), DONE)),
                                    encoding="utf-8")
    (corpus / "b.jsonl").symlink_to(tmp_path / "gone.jsonl")
    code, report, stderr = run_mutate(tmp_path, contract_of({"id": "cap", "kind": "tool_calls", "tool": "a", "max": 1}),
                                      numbered(*pair(1, "a", {}), DONE), "--corpus", "corpus")
    assert (code, report) == (2, None)
    assert stderr.endswith("corpus/b.jsonl: is a symbolic link that leads nowhere (its target is missing, or a loop)\n")


def test_report_schema_and_hashes(tmp_path: Path) -> None:
    """Point 66: `schema`, and the hashes are of the files' bytes."""
    import hashlib

    trace = numbered(*pair(1, "a", {}), DONE)
    _, report, _ = run_mutate(tmp_path, contract_of({"id": "cap", "kind": "tool_calls", "tool": "a", "max": 1}),
                              trace)
    assert report is not None and report["schema"] == "agent-invariants/mutate/v1"
    assert report["contract_sha256"] == hashlib.sha256((tmp_path / "c.json").read_bytes()).hexdigest()
    assert report["trace_sha256"] == hashlib.sha256((tmp_path / "t.jsonl").read_bytes()).hexdigest()


def test_invalid_trace_is_bad_input(tmp_path: Path) -> None:
    """Point 56: an invalid trace exits 2 with one stderr line and nothing on stdout."""
    from conftest import Cli

    (tmp_path / "c.json").write_text(json.dumps(contract_of({"id": "cap", "kind": "tool_calls", "tool": "a",
                                                             "max": 1})), encoding="utf-8")
    (tmp_path / "t.jsonl").write_text('{"seq": 2, "type": "x"}\n{"seq": 1, "type": "y"}\n', encoding="utf-8")
    result = Cli(tmp_path)("mutate", "-c", "c.json", "-t", "t.jsonl", "--format", "json")
    assert (result.returncode, result.stdout, len(result.stderr.splitlines())) == (2, "", 1)


def test_invalid_contract_is_bad_input(tmp_path: Path) -> None:
    """Point 56: an invalid contract exits 2, nothing on stdout."""
    code, report, stderr = run_mutate(tmp_path, contract_of({"id": "cap", "kind": "tool_calls", "tool": "a",
                                                             "max": -1}), numbered(*pair(1, "a", {}), DONE))
    assert (code, report, len(stderr.splitlines())) == (2, None, 1)


def test_swap_with_interleaved_pairs(tmp_path: Path) -> None:
    """Point 59 is ambiguous when pairs interleave ("the nearest later complete pair B of a
    different tool, when A's result precedes B's call"). The product reads it literally: B is the
    nearest such pair, and A gets no swap when B starts before A's result; a reasonable reading,
    asserted here (the property test does not generate interleaving)."""
    trace = numbered({"type": "tool.call", "tool": "a", "call_id": "c1"}, {"type": "tool.call", "tool": "b",
                                                                           "call_id": "c2"},
                     {"type": "tool.result", "call_id": "c1", "ok": True},
                     {"type": "tool.result", "call_id": "c2", "ok": True}, *pair(3, "a", {}), DONE)
    report = assert_matches(tmp_path, contract_of({"id": "cap", "kind": "tool_calls", "tool": "a", "max": 5}), trace)
    assert [m for m in ids(report) if m.startswith("swap")] == ["swap_calls:20"]
