"""`record --enforce` asks only the rules that may deny a call (`Rule.may_deny`): a precedence rule
at the calls its `after` may match (and its `before`, under `scope: all`), a tool_args rule at the
calls of its `tool`. Before, a rule that pairs results with calls was asked at every call, and a
run of 8,000 lookups under a precedence rule took longer than the run timeout (the fourth hunt).

The decision must still be point 74's, word for word: every enforced error rule run over the trace
so far, the call last, denies when it puts a violation at the call. This test computes that
definition directly and compares it with the enforcer's on random runs.
"""
from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import msgspec
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent_invariants import load_contract
from agent_invariants.engine import run_check
from agent_invariants.events import decode_event
from agent_invariants.reader import TraceFile
from agent_invariants.record.enforce import Enforcer
from agent_invariants.rules import RULE_KINDS

from support import examples

ORDERS = ["A1", "A2"]


def _contract(scope: str, before_is_result: bool) -> dict[str, Any]:
    before = ({"type": "tool.result", "tool": "crm.lookup", "ok": True} if before_is_result
              else {"type": "tool.call", "tool": "orders.get"})
    return {"version": 2, "name": "asks", "rules": [
        {"id": "looked-up", "kind": "precedence", "before": before,
         "after": {"type": "tool.call", "tool": "payments.*"}, "correlate": ["order"], "scope": scope},
        {"id": "at-most-paid", "kind": "tool_args", "tool": "payments.refund", "match": {"amount": {"$lte": {
            "$from_result": {"tool": "crm.lookup", "where": {"order": {"$arg": "order"}}, "path": "paid"}}}}},
        {"id": "lookup-shape", "kind": "tool_args", "tool": "crm.*", "match": {"order": {"$regex": "^A[0-9]$"}}},
    ]}


_step = st.one_of(
    st.tuples(st.sampled_from(["orders.get", "crm.lookup", "payments.refund", "payments.credit", "kb.search"]),
              st.sampled_from([*ORDERS, "B7"]), st.integers(0, 30), st.booleans()),
)


def _events(steps: list[tuple[str, str, int, bool]]) -> list[dict[str, Any]]:
    """Each step a call with args, and for most a result (a lookup's holds what was paid)."""
    events: list[dict[str, Any]] = []
    for number, (tool, order, amount, answered) in enumerate(steps):
        events.append({"type": "tool.call", "tool": tool, "call_id": f"c{number}",
                       "args": {"order": order, "amount": amount}})
        if answered:
            events.append({"type": "tool.result", "tool": tool, "call_id": f"c{number}", "ok": True,
                           "result": {"order": order, "paid": 20}})
    return [{"seq": seq, **event} for seq, event in enumerate(events, 1)]


def _by_definition(contract: Any, path: str, call: Any, index: int) -> list[str]:
    """Point 74: the enforced error rules, run over the trace, that put a violation at the call."""
    enforced = msgspec.structs.replace(contract, rules=[rule for rule in contract.rules
                                                        if RULE_KINDS[rule.kind].enforced])
    checked = run_check(enforced, TraceFile(path), max_violations=0, partial=True)
    return [rule.id for rule, result in zip(checked.rules, checked.report.results, strict=True)
            if rule.denies(result, call, index)]


@settings(max_examples=examples(30), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(scope=st.sampled_from(["first", "all"]), before_is_result=st.booleans(),
       steps=st.lists(_step, min_size=1, max_size=12))
def test_the_enforcer_asks_every_rule_that_denies(tmp_path: Path, scope: str, before_is_result: bool,
                                                  steps: list[tuple[str, str, int, bool]]) -> None:
    contract = load_contract(_contract(scope, before_is_result))
    enforcer = Enforcer(contract)
    events = _events(steps)
    path = tmp_path / "trace.jsonl"
    for end, event in enumerate(events):
        if event["type"] != "tool.call":
            continue
        lines = [json.dumps(each).encode() for each in events[:end + 1]]
        path.write_bytes(b"\n".join(lines) + b"\n")
        call = decode_event(lines[-1])
        denial = enforcer.judge(str(path), call)
        assert ([] if denial is None else denial.rule_ids) == _by_definition(contract, str(path), call, end)


def test_each_rule_denies_where_the_definition_says() -> None:
    """A run in which each rule denies a call (so the comparison above is not of quiet runs)."""
    steps = [("orders.get", "A1", 0, True),        # a before of A1
             ("crm.lookup", "B7", 0, True),        # lookup-shape: B7 is no A<digit>
             ("payments.refund", "A2", 5, True),   # looked-up: no before of A2; at-most-paid: no lookup of A2
             ("crm.lookup", "A1", 0, True),        # pays 20
             ("payments.refund", "A1", 25, True),  # at-most-paid: 25 > 20
             ("orders.get", "A2", 0, True)]        # under scope all: a before after its group's first after
    for scope, denied in (("first", [[], ["lookup-shape"], ["looked-up", "at-most-paid"], [], ["at-most-paid"], []]),
                          ("all", [[], ["lookup-shape"], ["looked-up", "at-most-paid"], [], ["at-most-paid"],
                                   ["looked-up"]])):
        contract = load_contract(_contract(scope, False))
        enforcer = Enforcer(contract)
        events = _events(steps)
        found = []
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "trace.jsonl"
            for end, event in enumerate(events):
                if event["type"] == "tool.call":
                    lines = [json.dumps(each).encode() for each in events[:end + 1]]
                    path.write_bytes(b"\n".join(lines) + b"\n")
                    call = decode_event(lines[-1])
                    denial = enforcer.judge(str(path), call)
                    found.append([] if denial is None else denial.rule_ids)
                    assert found[-1] == _by_definition(contract, str(path), call, end)
        assert found == denied, scope


def test_a_precedence_rule_is_asked_only_where_it_may_deny() -> None:
    """Its violations sit at afters (and, under `scope: all`, at a before after its group's first
    after): a lookup is not asked about under `first`."""
    from agent_invariants.rules import rule_for

    first, every = (rule_for(load_contract(_contract(scope, False)).rules[0]) for scope in ("first", "all"))
    lookup = decode_event(b'{"seq": 1, "type": "tool.call", "tool": "orders.get"}')
    refund = decode_event(b'{"seq": 1, "type": "tool.call", "tool": "payments.refund"}')
    assert (first.may_deny(lookup), first.may_deny(refund)) == (False, True)
    assert (every.may_deny(lookup), every.may_deny(refund)) == (True, True)
