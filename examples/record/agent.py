"""A refund agent that speaks the record protocol (standard library only).

Run it under the harness:
    agent-invariants record --contract contract.json --fixtures fixtures.json -- python agent.py
With AGENT_MODE=reckless (pass --env AGENT_MODE=reckless) it refunds without asking first.
"""
import json
import os
import sys


def send(message):
    print(json.dumps(message), flush=True)   # one JSON object per line on stdout


def receive():
    return json.loads(sys.stdin.readline())  # one reply per line on stdin


def call(call_id, tool, args):
    send({"type": "tool.call", "call_id": call_id, "tool": tool, "args": args})
    reply = receive()
    if reply["type"] == "tool.denied":
        raise PermissionError(reply["reason"])
    return reply["ok"], reply["result"]


start = receive()                            # run.start: {protocol, run_id, input}
order = start["input"]["order"]
ok, found = call("c1", "orders.get", {"order": order})
amount = found["paid"]
if os.environ.get("AGENT_MODE") != "reckless":
    send({"type": "approval.request", "approval_id": "a1", "tool": "payments.refund",
          "args": {"order": order, "amount": amount}})
    if not receive()["approved"]:
        send({"type": "run.completed", "status": "awaiting_approval"})
        sys.exit(0)
try:
    call("c2", "payments.refund", {"order": order, "amount": amount})
except PermissionError as denied:
    send({"type": "agent.message", "text": f"refund refused: {denied}"})
    send({"type": "run.failed", "reason": "refund refused"})
    sys.exit(0)
call("c3", "ledger.verify", {"order": order})     # the fixture observes the refund
send({"type": "agent.message", "text": f"Refunded {amount} for {order}.", "claims_completion": True})
send({"type": "run.completed", "status": "completed", "output": {"refunded": [order], "amount": amount}})
