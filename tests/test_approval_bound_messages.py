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
