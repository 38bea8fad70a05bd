#!/usr/bin/env python3
"""Fuzz target: arbitrary bytes as a YAML contract.

YAML can expand: an alias repeats a whole node, so nine aliases of nine aliases, nine deep, make a
billion nodes from 500 bytes. The loader counts nodes as the tree would hold them and refuses past
`MAX_YAML_NODES`, an alias inside its own anchor, and nesting past 500 levels. A finding here is an
exception other than `InputError`, or a hang or runaway memory (atheris's `-timeout` and
`-rss_limit_mb` catch those, so keep them set).

When a document loads, the contract is used as the CLI uses it (`check_trace` on a fixed trace,
rendered), and, as the oracle, its normalised form (`to_dict()`) loads again as JSON to the same
contract: YAML and JSON contracts are one language.

Run:  python fuzz/fuzz_yaml.py fuzz/work/yaml fuzz/corpus/yaml -dict=fuzz/yaml.dict -max_total_time=1800 \\
          -rss_limit_mb=2048 -timeout=30
"""
from __future__ import annotations

import os
import sys

import atheris

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _fuzzcommon  # noqa: E402  (not instrumented: it is the harness, not the target)

with atheris.instrument_imports():
    import msgspec

    from agent_invariants import InputError, check_trace, load_contract
    from agent_invariants.contract import ContractSource
    from agent_invariants.render import json as render_json
    from agent_invariants.render import text as render_text

TRACE = b"""\
{"seq":1,"type":"run.start"}
{"seq":2,"type":"approval.granted","approval_id":"ap-1","approval_scope":"payments.refund"}
{"seq":3,"type":"tool.call","tool":"payments.refund","call_id":"c1","approval_id":"ap-1","call_signature":"r:1"}
{"seq":4,"type":"tool.result","tool":"payments.refund","call_id":"c1","ok":false}
{"seq":5,"type":"tool.call","tool":"shell.exec","call_id":"c2"}
{"seq":6,"type":"outcome.observed","outcome_id":"o","verdict":"satisfied","evidence_class":"externally_observed"}
{"seq":7,"type":"control.stop"}
{"seq":8,"type":"run.completed","claims_completion":true,"confidence":0.9}
"""
HERE = os.path.dirname(os.path.abspath(__file__))


def TestOneInput(data: bytes) -> None:
    try:
        try:
            contract = load_contract(ContractSource(data, "contract.yaml", HERE, True))
        except InputError:
            return
        report = check_trace(contract, TRACE)
        render_json.render(report)
        render_text.render(report)
        normal = contract.to_dict()
        try:
            again = load_contract(msgspec.json.encode(normal))
        except InputError as exc:
            raise _fuzzcommon.OracleMismatch("yaml-as-json", f"the normalised contract does not load as JSON: {exc}") \
                from None
        if again.to_dict() != normal:
            raise _fuzzcommon.OracleMismatch("yaml-as-json", "the YAML contract and its JSON form differ")
    except Exception as exc:  # noqa: BLE001 - everything but InputError is a finding
        _fuzzcommon.finding(exc, data, "yaml")


def main() -> None:
    atheris.Setup(sys.argv, TestOneInput)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
