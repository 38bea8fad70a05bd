"""A check leaves no reference cycles behind: what it built is freed as soon as the caller lets
the report go, not at the collector's next full pass.

The command runs one check and exits, but the MCP server, the pytest plugin and a library loop run
many, and the checker pauses the collector and then moves what survived to the oldest generation,
which is rarely collected. A cycle through a rule (a bound method kept on the rule, the check's
pairing of calls held by a rule, the routes holding the router) kept that check's whole state:
the MCP server grew by 16 MB per call of 100,000 events, without end. Each case runs in a fresh
interpreter with the collector off, so that nothing else makes garbage meanwhile.
"""
from __future__ import annotations

import json
import subprocess
import sys

from support import EXAMPLES

_PROBE = r'''
import gc, glob, json, os, sys
from agent_invariants import check_trace, compare_traces, load_contract

def garbage(run):
    run()   # first: what is made once (imports, caches) is not the check's
    gc.collect()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)
    run()
    found = gc.collect()
    kinds = sorted({type(item).__name__ for item in gc.garbage})
    gc.garbage.clear()
    gc.set_debug(0)
    gc.enable()
    return [found, kinds]

cases = {}
os.chdir(sys.argv[1])
for path in sorted(glob.glob("*/contract.json")):
    traces = sorted(glob.glob(os.path.join(os.path.dirname(path), "*.jsonl")))
    if not traces or path.startswith("imports"):
        continue
    contract = load_contract(path)
    for trace in traces:
        cases[f"check {trace}"] = garbage(lambda: check_trace(contract, trace))
        cases[f"compare {trace}"] = garbage(lambda: compare_traces(contract, traces[0], trace))
calls = [{"seq": seq, "type": "tool.call", "tool": tool, "call_id": f"c{seq}"}
         for seq, tool in enumerate(["kb.search", "crm.lookup", "kb.search", "payments.refund"], 1)]
for mode in ("subsequence", "exact", "contiguous", "any_order"):
    order = {"version": 2, "name": "order", "rules": [
        {"id": "plan", "kind": "tool_order", "mode": mode, "tools": ["kb.search", "payments.*"]}]}
    cases[f"tool_order {mode}"] = garbage(lambda: check_trace(order, calls))
from agent_invariants.mcp_server import run_tool
contract = {"version": 1, "name": "c", "rules": [{"id": "r", "kind": "deny_tool", "tool": "shell.*"}]}
cases["mcp check"] = garbage(lambda: run_tool("agent_invariants_check_trace", {"contract": contract, "events": calls}))
print(json.dumps(cases))
'''


def test_no_check_leaves_a_reference_cycle() -> None:
    done = subprocess.run([sys.executable, "-c", _PROBE, str(EXAMPLES)], capture_output=True, text=True,
                          timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    cases = json.loads(done.stdout)
    assert len(cases) > 20   # the examples' traces, checked and compared, and the rest
    assert {case: found for case, found in cases.items() if found[0]} == {}
