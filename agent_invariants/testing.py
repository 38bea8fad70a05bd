"""Assertions for tests: check a trace (or compare two) and fail with the report a person reads.

    from agent_invariants.testing import assert_trace, assert_compatible

    def test_the_refund_agent_keeps_its_rules():
        assert_trace("runs/refund.jsonl", "agent-invariants.json")

    def test_the_new_model_makes_nothing_worse():
        assert_compatible("runs/baseline.jsonl", "runs/candidate.jsonl", "agent-invariants.json")

A trace is a path, the bytes of a trace file, or a list of events (dicts); a contract is a path, a
parsed mapping or a loaded `Contract`. A failing check raises `AssertionError` whose message is the
text report, with the file and line of each violation; a passing one returns the report (a
`CheckReport` or `CompareReport`) for further assertions. Bad input (a contract that does not
validate, an unreadable trace) raises `InputError`, as the library does: it is not a verdict.
"""
from __future__ import annotations

from agent_invariants.api import ContractLike, check_trace, compare_traces
from agent_invariants.engine import Trace
from agent_invariants.render import RenderOptions, text
from agent_invariants.report import CheckReport, CompareReport

__all__ = ("assert_compatible", "assert_trace")


def assert_trace(trace: Trace, contract: ContractLike) -> CheckReport:
    """Check `trace` against `contract`; AssertionError with the text report when an
    error-severity rule is broken (warnings never fail). Returns the report."""
    __tracebackhide__ = True   # pytest shows the failure at the test's line, not in here
    report = check_trace(contract, trace)
    if not report.passed:
        raise AssertionError(_message(report))
    return report


def assert_compatible(baseline: Trace, candidate: Trace, contract: ContractLike) -> CompareReport:
    """Compare `candidate` with `baseline` under `contract`; AssertionError with the text report
    when the candidate regresses (a rule newly failing, an outcome worse, as the contract's compare
    policy says). Returns the report."""
    __tracebackhide__ = True
    report = compare_traces(contract, baseline, candidate)
    if not report.compatible:
        raise AssertionError(_message(report))
    return report


def _message(report: CheckReport | CompareReport) -> str:
    return "\n" + text.render(report, RenderOptions(color=False)).rstrip("\n")
