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
validate, an unreadable trace) raises `InputError`, as the library does: it is not a verdict; so
does a version-2 contract that lint proves no trace can pass, as `check` refuses it (`lint=False`
checks it anyway, as `--no-lint` does).
What the check noticed of the trace itself, which may pass without being really checked (no
events, a misspelt event type or field, a tool name no glob can match: the README's "No silent
passes"), is a `UserWarning`, which pytest lists in its warnings summary. (A rule that checked
nothing in one trace is usual for a contract of many rules, and is left to the report.)
"""
from __future__ import annotations

import warnings
from collections.abc import Mapping

from agent_invariants.api import ContractLike, check_trace, compare_traces
from agent_invariants.contract import Contract, load_contract
from agent_invariants.contract_source import read_contract
from agent_invariants.engine import Trace
from agent_invariants.reader import DEFAULT_MAX_LINE_BYTES
from agent_invariants.render import RenderOptions, text
from agent_invariants.report import CheckReport, CompareReport

__all__ = ("assert_compatible", "assert_trace")


def assert_trace(trace: Trace, contract: ContractLike, *, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
                 lint: bool = True) -> CheckReport:
    """Check `trace` against `contract`; AssertionError with the text report when an
    error-severity rule is broken (warnings never fail). Returns the report. `max_line_bytes`
    raises the longest line a trace file may have (1 MiB by default); `lint=False` checks a
    version-2 contract that lint refuses."""
    __tracebackhide__ = True   # pytest shows the failure at the test's line, not in here
    report = check_trace(_linted(contract, lint), trace, max_line_bytes=max_line_bytes)
    _warn([report])
    if not report.passed:
        raise AssertionError(_message(report))
    return report


def assert_compatible(baseline: Trace, candidate: Trace, contract: ContractLike, *,
                      max_line_bytes: int = DEFAULT_MAX_LINE_BYTES, lint: bool = True) -> CompareReport:
    """Compare `candidate` with `baseline` under `contract`; AssertionError with the text report
    when the candidate regresses (a rule newly failing, an outcome worse, as the contract's compare
    policy says). Returns the report. `max_line_bytes` and `lint` as for `assert_trace`."""
    __tracebackhide__ = True
    report = compare_traces(_linted(contract, lint), baseline, candidate, max_line_bytes=max_line_bytes)
    _warn([report.baseline, report.candidate])
    if not report.compatible:
        raise AssertionError(_message(report))
    return report


def _linted(contract: ContractLike, lint: bool) -> Contract:
    """The contract loaded (a file read once, its rules' lines known), unless lint refuses it: then
    the `ContractError` `check` prints, `file:line: $.rules[i]: lint <code>: ...`."""
    if isinstance(contract, Contract):
        loaded, label, source = contract, "contract", None
    elif isinstance(contract, Mapping):
        loaded, label, source = load_contract(contract), "contract", None
    else:
        source = read_contract(contract)
        loaded, label = load_contract(source), source.label
    if lint and loaded.version == 2:
        from agent_invariants.lint import refuse_unpassable

        refuse_unpassable(loaded, label, source, skip="lint=False")
    return loaded


def _warn(checks: list[CheckReport]) -> None:
    """A warning for each thing the checks noticed of their traces, as `check` says it on stderr
    (the lines `--strict` makes errors: those about a trace itself, not about a rule)."""
    from agent_invariants.notices import notice_lines

    for line in notice_lines(checks, strict=True)[0]:
        if line.startswith("error: "):
            warnings.warn(f"agent-invariants: {line.removeprefix('error: ')}", UserWarning, stacklevel=3)


def _message(report: CheckReport | CompareReport) -> str:
    """The text report, from its first line (`FAIL  refund-desk`), which pytest's short summary shows."""
    return text.render(report, RenderOptions(color=False)).rstrip("\n")
