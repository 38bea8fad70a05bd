"""What an approval_bound message says of a grant that `bind: call_id` rejects.

Found by an outside review of `record` (hunt 70): the harness writes its grants without a
call_id (spec point 64), and a call it had just approved was denied with "the nearest grant (seq
3) is for another call_id", though the grant names none. The message now says which side lacks
the id; the code stays `call_id_mismatch`.
"""
from __future__ import annotations

from typing import Any

import pytest

from agent_invariants import check_trace

CONTRACT = {"version": 2, "name": "c", "rules": [
    {"id": "bound", "kind": "approval_bound", "tool": "payments.refund", "bind": "call_id"}]}


@pytest.mark.parametrize(("grant_id", "call_id", "said"), [
    (None, "c1", "is without a call_id"),
    ("c1", None, "is for a call_id, and the call has none"),
    ("c2", "c1", "is for another call_id"),
])
def test_the_message_says_which_call_id_is_missing(grant_id: str | None, call_id: str | None, said: str) -> None:
    grant: dict[str, Any] = {"seq": 1, "type": "approval.granted", "approval_id": "a1", "tool": "payments.refund"}
    call: dict[str, Any] = {"seq": 2, "type": "tool.call", "tool": "payments.refund"}
    if grant_id is not None:
        grant["call_id"] = grant_id
    if call_id is not None:
        call["call_id"] = call_id
    report = check_trace(CONTRACT, [grant, call])
    [violation] = report.violations
    assert violation.message == (
        f"Call payments.refund at seq 2 has no unused approval that covers it: the nearest grant (seq 1) {said}.")
    assert violation.evidence["rejected"] == [{"grant_seq": 1, "why": "call_id_mismatch"}]


# Found by a spec-words reading of the order kinds: the message said "for another tool" of a grant
# that names no tool, and "without a time to age it by" of a grant (or a call) whose time is there
# but names no instant (an offset of 24 hours or more) or of a grant when the call had no time.

@pytest.mark.parametrize(("grant", "call", "rule", "why", "said"), [
    ({"approval_scope": "payments"}, {}, {}, "tool_mismatch",
     "is without a tool (a rule without a scope needs grants that name the tool)"),
    ({"tool": "payments.credit"}, {}, {}, "tool_mismatch", "is for another tool"),
    ({"tool": "payments.refund"}, {"time": "2026-01-01T10:00:00Z"}, {"max_age_ms": 1000}, "time_missing",
     "is without a time to age it by"),
    ({"tool": "payments.refund", "time": "2026-01-01T10:00:00+24:00"}, {"time": "2026-01-01T10:00:00Z"},
     {"max_age_ms": 1000}, "time_missing",
     "is stamped with a time that names no instant (an offset of 24 hours or more)"),
    ({"tool": "payments.refund", "time": "2026-01-01T10:00:00Z"}, {}, {"max_age_ms": 1000}, "time_missing",
     "is unusable: the call has no time to age it by"),
    ({"tool": "payments.refund", "time": "2026-01-01T10:00:00Z"}, {"time": "2026-01-01T10:00:00+24:00"},
     {"max_age_ms": 1000}, "time_missing", "is unusable: the call has a time that names no instant to age it by"),
])
def test_the_message_says_what_the_grant_or_call_lacks(grant: dict[str, Any], call: dict[str, Any],
                                                        rule: dict[str, Any], why: str, said: str) -> None:
    contract = {"version": 2, "name": "c", "rules": [
        {"id": "bound", "kind": "approval_bound", "tool": "payments.refund", **rule}]}
    events = [{"seq": 1, "type": "approval.granted", **grant},
              {"seq": 2, "type": "tool.call", "tool": "payments.refund", **call}]
    [violation] = check_trace(contract, events).violations
    assert violation.message == (
        f"Call payments.refund at seq 2 has no unused approval that covers it: the nearest grant (seq 1) {said}.")
    assert violation.evidence["rejected"] == [{"grant_seq": 1, "why": why}]
