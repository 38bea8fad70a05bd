"""The example of the part-3 kinds (examples/refund-report/) does what its README says: the good
run passes, the bad run fails each rule where the README says, and the cut run under --partial
fails only what already happened."""
from __future__ import annotations

import json

from support import EXAMPLES

FOLDER = EXAMPLES / "refund-report"


def _check(cli, trace: str, *extra: str) -> tuple[int, dict]:
    result = cli("check", "--contract", str(FOLDER / "contract.json"), "--trace", str(FOLDER / trace),
                 "--format", "json", *extra)
    return result.returncode, json.loads(result.stdout)


def test_the_good_run_passes_every_rule(cli):
    code, report = _check(cli, "pass.jsonl")
    assert (code, report["passed"], report["violations"]) == (0, True, [])
    assert [r["checked"] for r in report["results"]] == [1, 1, 1, 1, 1, 1, 2, 5, 1]


def test_the_bad_run_fails_where_the_readme_says(cli):
    code, report = _check(cli, "fail.jsonl")
    assert code == 1
    assert [(v["rule_id"], v["code"], v.get("event_seq")) for v in report["violations"]] == [
        ("true-total", "output_match.mismatch", 11),
        ("refund-iff-reported", "required_when.min", 11),
        ("no-mail-on-fraud", "forbidden_when.forbidden", 7),
        ("failures-handled", "failure_handled.unhandled", 6),
        ("fast-lookups", "latency_budget.exceeded", 3),
        ("five-minutes", "run_duration.exceeded", 11),
    ]
    by_rule = {v["rule_id"]: v["evidence"] for v in report["violations"]}
    assert by_rule["true-total"] == {"mismatches": [{"actual": 45, "expected": {"any_of": [40]},
                                                     "pointer": "/output/total"}]}
    assert by_rule["fast-lookups"] == {"call_id": "c1", "duration_ms": 3200, "max_ms": 2000, "source": "time",
                                       "tool": "orders.get"}
    assert by_rule["five-minutes"] == {"duration_ms": 420000, "end_seq": 11, "max_ms": 300000, "source": "time",
                                       "start_seq": 1}


def test_the_cut_run_under_partial_fails_only_what_already_happened(cli):
    code, report = _check(cli, "cut.jsonl", "--partial")
    assert code == 1
    assert (report["partial"], report["inconclusive_count"], report["error_count"]) == (True, 6, 1)
    assert [(v["rule_id"], v["status"]) for v in report["violations"]] == [
        ("report-shape", "inconclusive"), ("true-total", "inconclusive"), ("completed", "inconclusive"),
        ("refund-iff-reported", "inconclusive"), ("failures-handled", "inconclusive"),
        ("fast-lookups", "fail"), ("five-minutes", "inconclusive")]
    code, report = _check(cli, "cut.jsonl")
    assert (code, report["error_count"]) == (1, 7)
    assert "partial" not in report
