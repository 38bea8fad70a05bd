"""Inputs of the contract-quality case: a contract of 10,000 rules for `lint`, and a trace of 1,000
events that passes a 5-rule contract for `mutate` (500 mutants of it by default).

    python bench/gen_quality.py --out-dir bench/out

The lint contract spreads nine kinds over 1,111 tools (`svc0.op0` ... ), each tool with a deny,
a cap, an approval, a retry limit, an argument check, an order, a banned event, a required event
and a result requirement, plus one allow list: pairs of rules on the same tool are what the glob
algebra must compare, so the work grows with the rules, not with their square. The trace is a
refund desk: lookups, approved refunds of what was paid, messages, a final report.
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path


def lint_contract(rules: int = 10_000) -> dict:
    tools = -(-(rules - 1) // 9)
    out: list[dict] = [{"id": "known", "kind": "allow_tools", "tools": ["svc*"]}]
    for number in range(tools):
        tool = f"svc{number % 97}.op{number}"
        out += [
            {"id": f"deny-{number}", "kind": "deny_tool", "tool": f"{tool}.admin"},
            {"id": f"cap-{number}", "kind": "tool_calls", "tool": tool, "max": 3 + number % 5},
            {"id": f"approve-{number}", "kind": "require_approval", "tool": tool, "within_events": 20},
            {"id": f"retry-{number}", "kind": "retry_limit", "tool": tool, "max_attempts": 2},
            {"id": f"args-{number}", "kind": "tool_args", "tool": tool, "match": {"id": {"$regex": "^[A-Z][0-9]+$"}}},
            {"id": f"order-{number}", "kind": "precedence",
             "before": {"type": "tool.result", "tool": f"svc{number % 97}.lookup"},
             "after": {"type": "tool.call", "tool": tool}},
            {"id": f"ban-{number}", "kind": "deny_event", "match": {"type": "tool.call", "tool": tool, "ok": False}},
            {"id": f"seen-{number}", "kind": "require_event", "match": {"type": "tool.result", "tool": tool}, "min": 0},
            {"id": f"answered-{number}", "kind": "tool_result_required", "tool": tool},
        ]
    return {"version": 2, "name": "lint-10k", "rules": out[:rules]}


def mutate_case(events: int = 1_000) -> tuple[list[dict], dict]:
    trace: list[dict] = []

    def add(**event: object) -> None:
        seq = len(trace) + 1
        trace.append({"seq": seq, "time": f"2026-03-02T09:{seq // 60 % 60:02d}:{seq % 60:02d}Z", **event})

    add(type="run.start")
    number = 0
    while len(trace) < events - 1:
        number += 1
        order, paid = f"A{1000 + number}", 10 + number % 7
        add(type="tool.call", tool="orders.get", call_id=f"g{number}", args={"order": order})
        add(type="tool.result", call_id=f"g{number}", ok=True, result={"paid": paid, "currency": "EUR"}, duration_ms=20)
        if number % 5 == 0:
            add(type="approval.granted", approval_id=f"a{number}", tool="payments.refund", approver="ops",
                args={"order": order, "amount": paid})
            add(type="tool.call", tool="payments.refund", call_id=f"r{number}", args={"order": order, "amount": paid})
            add(type="tool.result", call_id=f"r{number}", ok=True, result={"refund": f"r-{number}"}, duration_ms=50)
        if number % 3 == 0:
            add(type="agent.message", data={"text": "working on it"})
    del trace[events - 1:]
    while trace[-1]["type"] == "tool.call":   # a call cut from its result: end on a message instead
        trace[-1] = {"seq": trace[-1]["seq"], "time": trace[-1]["time"], "type": "agent.message",
                     "data": {"text": "done"}}
    refunds = sum(1 for event in trace if event["type"] == "tool.call" and event["tool"] == "payments.refund")
    add(type="run.completed", output={"refunds": refunds, "ok": True})
    contract = {"version": 2, "name": "refund-desk-1k", "rules": [
        {"id": "lookup-first", "kind": "precedence",
         "before": {"type": "tool.result", "tool": "orders.get", "ok": True},
         "after": {"type": "tool.call", "tool": "payments.refund"}, "correlate": ["order"]},
        {"id": "approved", "kind": "approval_bound", "tool": "payments.refund", "bind": "args_subset"},
        {"id": "no-shell", "kind": "deny_tool", "tool": "shell.*"},
        {"id": "status", "kind": "run_status", "equals": "completed"},
        {"id": "latency", "kind": "latency_budget", "tool": "*", "max_ms": 100},
    ]}
    return trace, contract


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out-dir", type=Path, required=True)
    args = parser.parse_args()
    args.out_dir.mkdir(parents=True, exist_ok=True)
    (args.out_dir / "lint-10k.json").write_text(json.dumps(lint_contract(), indent=1) + "\n")
    trace, contract = mutate_case()
    (args.out_dir / "mutate-1k.jsonl").write_text("".join(json.dumps(event) + "\n" for event in trace))
    (args.out_dir / "mutate-1k.json").write_text(json.dumps(contract, indent=1) + "\n")


if __name__ == "__main__":
    main()
