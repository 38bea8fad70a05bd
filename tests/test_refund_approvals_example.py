"""The example of the four ordering and approval kinds (examples/refund-approvals/) does what its
README says: the good run passes, and the bad run fails each rule where the README says."""
from __future__ import annotations

import json

from support import EXAMPLES

FOLDER = EXAMPLES / "refund-approvals"


def _check(cli, trace: str) -> tuple[int, dict]:
    result = cli("check", "--contract", str(FOLDER / "contract.json"), "--trace", str(FOLDER / trace),
                 "--format", "json")
    return result.returncode, json.loads(result.stdout)


def test_the_good_run_passes_every_rule(cli):
    code, report = _check(cli, "pass.jsonl")
    assert code == 0
    assert [(r["rule_id"], r["passed"], r["checked"]) for r in report["results"]] == [
        ("plan", True, 3), ("lookup-before-refund", True, 1), ("approved-refunds", True, 1),
        ("refunds-reported", True, 1)]


def test_the_bad_run_fails_where_the_readme_says(cli):
    code, report = _check(cli, "fail.jsonl")
    assert code == 1
    found = [(v["rule_id"], v["code"], v.get("event_seq"), v.get("related_seqs")) for v in report["violations"]]
    assert found == [
        ("plan", "tool_order.missing", None, None),
        ("lookup-before-refund", "precedence.late", 2, [5]),
        ("lookup-before-refund", "precedence.before_after_action", 5, [2]),
        ("approved-refunds", "approval_bound.missing", 2, None),
        ("approved-refunds", "approval_bound.missing", 9, None),
        ("approved-refunds", "approval_bound.missing", 13, None),
        ("refunds-reported", "tool_calls.output_mismatch", 15, None),
    ]
    by_seq = {v["event_seq"]: v["evidence"] for v in report["violations"] if v["rule_id"] == "approved-refunds"}
    assert by_seq[2]["rejected"] == []
    assert by_seq[9]["rejected"] == [{"grant_seq": 6, "pointer": "/args/amount", "why": "args_mismatch"}]
    assert by_seq[13] == {"call_id": "c6", "tool": "payments.refund",
                          "rejected": [{"by_seq": 11, "grant_seq": 6, "why": "consumed"}]}
    assert [v["event_seq"] for v in report["violations"] if v.get("prevented")] == [13]
    assert report["violations"][-1]["evidence"] == {
        "count": 2, "count_mode": "successful", "max": 3, "output_length": 3, "path": "refunds",
        "tool": "payments.refund"}
