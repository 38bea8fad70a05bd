#!/usr/bin/env python3
"""Traces for the benchmark's stress cases, with their contracts (stdlib only, deterministic).

  gen_cases.py violations --count 1000000 --out T.jsonl --contract C.json [--seed 7]
      2 x COUNT tool.call events: COUNT distinct call_signatures, each used exactly twice, in a
      shuffled order (seeded), against one retry_limit rule with max_attempts 1, so every
      signature is one violation: COUNT violations.

  gen_cases.py approval-ids --count 1000000 --out T.jsonl --contract C.json [--seed 7]
      COUNT approval.granted events, each with a new approval_id (approved, scope
      payments.refund or payments.credit), each followed by the payment call that names it:
      2 x COUNT events, against one require_approval rule without within_events. It passes.

  gen_cases.py references --count 1000000 --out T.jsonl --contract C.json [--seed 7]
      about 2 x COUNT events: a policy lookup, its result (the same limits every time) and a refund,
      over and over, against two version-2 tool_args rules whose `$lte` and `$in` read every earlier
      lookup's result (no `where`): each refund has as many candidates as lookups before it, all
      equal, and a quarter of the refunds fail both rules.

Events carry time and run_id like gen_trace.py's (non-compact) events, and calls an actor; no
results (the contracts have no rule that needs them), but for the references case. Sequence numbers are 1, 2, 3...
"""
import argparse
import datetime as _dt
import json
import random
import sys

from gen_trace import PAY_TOOLS, PLAIN_TOOLS


class Writer:
    def __init__(self, out, rng):
        self.out = out
        self.rng = rng
        self.seq = 0
        self.clock = _dt.datetime(2025, 1, 1, 8, 0, 0, tzinfo=_dt.UTC)

    def emit(self, typ, **fields):
        self.seq += 1
        self.clock += _dt.timedelta(milliseconds=self.rng.randint(5, 900))
        ev = {"seq": self.seq, "type": typ,
              "time": self.clock.strftime("%Y-%m-%dT%H:%M:%S.") + f"{self.clock.microsecond // 1000:03d}Z",
              "run_id": "perf-run-1"}
        ev.update(fields)
        self.out.write(json.dumps(ev, separators=(",", ":")))
        self.out.write("\n")


def violations(count, rng, out):
    order = list(range(count)) * 2
    rng.shuffle(order)
    tools = [rng.choice(PLAIN_TOOLS) for _ in range(count)]   # each signature keeps its tool
    writer = Writer(out, rng)
    for call_no, group in enumerate(order, 1):
        tool = tools[group]
        writer.emit("tool.call", tool=tool, call_id=f"c{call_no}", call_signature=f"{tool}:sig-{group:07d}",
                    actor="agent")
    return 2 * count, {
        "version": 1, "name": "perf-violations",
        "description": "Every call_signature is used twice, one attempt is allowed: one violation per signature.",
        "rules": [{"id": "one-attempt", "kind": "retry_limit", "max_attempts": 1, "group_by": "call_signature"}],
    }


def approval_ids(count, rng, out):
    writer = Writer(out, rng)
    for number in range(1, count + 1):
        tool = rng.choice(PAY_TOOLS)
        approval = f"ap-{number:07d}"
        writer.emit("approval.granted", approval_id=approval, approval_scope=tool, approved=True)
        writer.emit("tool.call", tool=tool, call_id=f"c{number}", call_signature=f"{tool}:order-{number}",
                    approval_id=approval, actor="agent")
    return 2 * count, {
        "version": 1, "name": "perf-approval-ids",
        "description": "Every payment call names its own, new approval; no window.",
        "rules": [{"id": "pay-approval", "kind": "require_approval", "tool": "payments.*", "scope": "payments.*"}],
    }


def references(count, rng, out):
    writer = Writer(out, rng)
    units = count * 2 // 3   # three events each: about 2 x COUNT in all
    for number in range(1, units + 1):
        writer.emit("tool.call", tool="policy.limits", call_id=f"p{number}", args={}, actor="agent")
        writer.emit("tool.result", tool="policy.limits", call_id=f"p{number}", ok=True,
                    result={"max_refund": 100, "allowed": [20, 50, 100]})
        writer.emit("tool.call", tool="payments.refund", call_id=f"r{number}", actor="agent",
                    args={"order": f"A{number}", "amount": rng.choice([20, 50, 100, 150])})
    reference = {"tool": "policy.limits"}
    return 3 * units, {
        "version": 2, "name": "perf-references",
        "description": "Every refund is checked against every earlier policy lookup, all alike; a quarter fail.",
        "rules": [
            {"id": "within-limit", "kind": "tool_args", "tool": "payments.refund",
             "match": {"amount": {"$lte": {"$from_result": {**reference, "path": "max_refund"}}}}},
            {"id": "allowed-amount", "kind": "tool_args", "tool": "payments.refund",
             "match": {"amount": {"$in": {"$from_result": {**reference, "path": "allowed"}}}}}],
    }


CASES = {"violations": violations, "approval-ids": approval_ids, "references": references}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("case", choices=sorted(CASES))
    ap.add_argument("--count", type=int, required=True, help="violations, or approval ids")
    ap.add_argument("--out", required=True)
    ap.add_argument("--contract", required=True)
    ap.add_argument("--seed", type=int, default=7)
    a = ap.parse_args(argv)
    with open(a.out, "w", encoding="utf-8", newline="\n") as fh:
        events, rules = CASES[a.case](a.count, random.Random(a.seed), fh)
    with open(a.contract, "w", encoding="utf-8") as fh:
        json.dump(rules, fh, indent=2)
        fh.write("\n")
    print(f"{a.out}: {events} events", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
