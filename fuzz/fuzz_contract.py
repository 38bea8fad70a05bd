#!/usr/bin/env python3
"""Fuzz target: arbitrary bytes as a contract.

Every input goes to `load_contract(data)`. When it loads, the contract is used the way the CLI
uses it: `check_trace` on a small fixed trace (rendered as JSON and text), `compare_traces` on a
fixed baseline/candidate pair (exercises the compare policy), and `contract.to_dict()` (what
`validate` prints).

Allowed outcomes: a contract, or `agent_invariants.InputError`. Anything else is a finding.

Oracle: normalisation is idempotent. `to_dict()` of a loaded contract, loaded again (as a mapping
and as JSON bytes), must load without error and give the same `to_dict()`.

Run:  python fuzz/fuzz_contract.py fuzz/corpus/contract -max_total_time=1800 -rss_limit_mb=2048
"""
from __future__ import annotations

import os
import sys

import atheris

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _fuzzcommon  # noqa: E402  (not instrumented: it is the harness, not the target)

with atheris.instrument_imports():
    from agent_invariants import InputError, check_trace, compare_traces, load_contract
    from agent_invariants.render import json as render_json
    from agent_invariants.render import text as render_text

# A small trace that touches every rule kind: calls with and without tools, ids and signatures,
# approvals, a failed result, outcomes, a confident completion claim, a stop and events after it.
TRACE = b"""\
{"seq":1,"type":"run.start","run_id":"r1"}
{"seq":2,"type":"policy.checked"}
{"seq":3,"type":"approval.granted","approval_id":"ap-1","approval_scope":"payments.refund","approved":true}
{"seq":4,"type":"tool.call","tool":"crm.lookup","call_id":"c1","call_signature":"lookup:42"}
{"seq":5,"type":"tool.result","tool":"crm.lookup","call_id":"c1","ok":true}
{"seq":6,"type":"tool.call","tool":"payments.refund","call_id":"c2","approval_id":"ap-1","call_signature":"refund:42"}
{"seq":7,"type":"tool.result","tool":"payments.refund","call_id":"c2","ok":false}
{"seq":8,"type":"tool.call","tool":"payments.refund","call_id":"c3","approval_id":"ap-2","call_signature":"refund:42"}
{"seq":9,"type":"tool.call","tool":"shell.exec"}
{"seq":10,"type":"tool.call"}
{"seq":11,"type":"secret.read","tool":"vault.read","ok":false}
{"seq":12,"type":"outcome.observed","outcome_id":"case-42","verdict":"satisfied","evidence_class":"externally_observed"}
{"seq":13,"type":"agent.message","claims_completion":true,"confidence":0.95}
{"seq":14,"type":"control.stop"}
{"seq":15,"type":"tool.call","tool":"kb.search","call_id":"c4"}
{"seq":16,"type":"run.completed","claims_completion":true}
"""

BASELINE = b"""\
{"seq":1,"type":"run.start"}
{"seq":2,"type":"tool.call","tool":"crm.lookup","call_id":"c1"}
{"seq":3,"type":"tool.result","tool":"crm.lookup","call_id":"c1","ok":true}
{"seq":4,"type":"outcome.observed","outcome_id":"case-1","verdict":"satisfied","evidence_class":"configured_verifier"}
{"seq":5,"type":"run.completed"}
"""


def TestOneInput(data: bytes) -> None:
    try:
        try:
            contract = load_contract(data)
        except InputError:
            return
        report = check_trace(contract, TRACE)
        render_json.render(report)
        render_text.render(report)
        compared = compare_traces(contract, BASELINE, TRACE)
        render_json.render(compared)
        render_text.render(compared)
        render_json.to_json({"valid": True, "contract": contract.to_dict()})
        _fuzzcommon.round_trip(contract, load_contract, InputError)
    except Exception as exc:  # noqa: BLE001 - everything but InputError is a finding
        _fuzzcommon.finding(exc, data, "contract")


def main() -> None:
    atheris.Setup(sys.argv, TestOneInput)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
