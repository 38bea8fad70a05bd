"""Text: the report for people at a terminal, grouped by rule, each violation with file:line.

    FAIL  refund-desk
          trace examples/refund/candidate.jsonl
          12 events · 4 tool calls · 2 errors · 0 warnings

    ✗ pay-approval  require_approval  1 error
        candidate.jsonl:7  seq 7  Tool payments.refund was called without a matching prior approval.
    ✓ no-shell  deny_tool

Colour only when asked (the CLI asks when stdout is a terminal and NO_COLOR is unset). Text that
comes from traces is made inert: control characters, terminal escapes included, are shown as
`\\x1b`-style escapes, so a trace cannot move the cursor or recolour the screen.
"""
from __future__ import annotations

from msgspec import UNSET

from agent_invariants._safe import inert
from agent_invariants.report import (
    CheckBatchReport,
    CheckReport,
    CompareBatchReport,
    CompareReport,
    RuleResult,
    Violation,
)

__all__ = ("render",)

_GREEN, _RED, _YELLOW, _DIM, _BOLD, _RESET = "\x1b[32m", "\x1b[31m", "\x1b[33m", "\x1b[2m", "\x1b[1m", "\x1b[0m"


def render(report: CheckReport | CompareReport | CheckBatchReport | CompareBatchReport, *,
           color: bool = False) -> str:
    """The report as readable text (ends with a newline)."""
    paint = _painter(color)
    if isinstance(report, (CheckBatchReport, CompareBatchReport)):
        lines = _batch(report, paint)
    elif isinstance(report, CompareReport):
        lines = _compare(report, paint)
    else:
        lines = _check(report, paint)
    return "\n".join(lines) + "\n"


def _batch(report: CheckBatchReport | CompareBatchReport, paint) -> list[str]:
    """Each trace's section, then one line for them all."""
    lines: list[str] = []
    for section in report.reports:
        lines += (_compare(section, paint) if isinstance(section, CompareReport) else _check(section, paint)) + [""]
    for failure in report.failures:
        lines += [f"{paint('ERROR', _RED + _BOLD)}  {_inert(failure.trace)}", f"      {_inert(failure.error)}", ""]
    if isinstance(report, CheckBatchReport):
        passed = sum(1 for section in report.reports if section.passed)
        ok = report.passed
        tally = (f"{_plural(report.traces, 'trace')}: {passed} passed, {len(report.reports) - passed} failed"
                 f"{f', {len(report.failures)} unreadable' if report.failures else ''} · "
                 f"{_plural(report.error_count, 'error')} · {_plural(report.warning_count, 'warning')}")
        verdict = "PASS" if ok else "FAIL"
    else:
        good = sum(1 for section in report.reports if section.compatible)
        ok = report.compatible
        tally = (f"{_plural(report.pairs, 'pair')}: {good} compatible, {len(report.reports) - good} regressed"
                 f"{f', {len(report.failures)} unreadable' if report.failures else ''} · "
                 f"{_plural(report.regressions, 'regression')}")
        verdict = "COMPATIBLE" if ok else "REGRESSION"
    lines.append(f"{paint(verdict, (_GREEN if ok else _RED) + _BOLD)}  {_inert(report.contract.name)}  {tally}")
    return lines


def _painter(color: bool):
    if not color:
        return lambda text, style: text
    return lambda text, style: f"{style}{text}{_RESET}"


def _check(report: CheckReport, paint, heading: bool = True) -> list[str]:
    lines: list[str] = []
    if heading:
        verdict = paint("PASS", _GREEN + _BOLD) if report.passed else paint("FAIL", _RED + _BOLD)
        lines.append(f"{verdict}  {_inert(report.contract.name)}")
        if report.trace is not UNSET:
            lines.append(f"      trace {_inert(report.trace)}")
    lines.append("      " + _counts(report))
    lines.append("")
    for result in report.results:
        lines += _rule(result, report, paint)
    return lines


def _counts(report: CheckReport) -> str:
    summary = report.summary
    return " · ".join([
        _plural(summary.events, "event"), _plural(summary.tool_calls, "tool call"),
        _plural(report.error_count, "error"), _plural(report.warning_count, "warning"),
    ])


def _rule(result: RuleResult, report: CheckReport, paint) -> list[str]:
    if result.passed:
        mark = paint("✓", _GREEN)
        tally = ""
    elif result.severity == "error":
        mark = paint("✗", _RED)
        tally = "  " + _plural(result.violation_count, "error")
    else:
        mark = paint("!", _YELLOW)
        tally = "  " + _plural(result.violation_count, "warning")
    lines = [f"{mark} {result.rule_id}  {paint(result.rule_kind, _DIM)}{tally}"]
    for violation in result.violations:
        lines.append(f"    {paint(_where(violation, report), _DIM)}{_inert(violation.message)}")
    left_out = result.violation_count - len(result.violations)
    if left_out:
        lines.append(f"    … and {left_out} more (raise --max-violations to see them)")
    return lines


def _where(violation: Violation, report: CheckReport) -> str:
    parts = []
    if violation.line is not UNSET:
        parts.append(f"{_inert(report.trace) if report.trace is not UNSET else '<trace>'}:{violation.line}")
    if violation.event_seq is not UNSET:
        parts.append(f"seq {violation.event_seq}")
    elif violation.event_index is UNSET:
        parts.append("whole trace")
    return "  ".join(parts) + "  "


def _compare(report: CompareReport, paint) -> list[str]:
    verdict = paint("COMPATIBLE", _GREEN + _BOLD) if report.compatible else paint("REGRESSION", _RED + _BOLD)
    lines = [f"{verdict}  {_inert(report.contract.name)}"]
    for label, side in (("baseline ", report.baseline), ("candidate", report.candidate)):
        name = f"  {_inert(side.trace)}" if side.trace is not UNSET else ""
        lines.append(f"      {label}{name}  {_counts(side)}")
    lines.append("")
    if not report.regressions:
        lines.append(paint("✓", _GREEN) + " No configured behaviour regression detected.")
    for regression in report.regressions:
        mark = paint("✗", _RED) if regression.severity == "error" else paint("!", _YELLOW)
        lines.append(f"{mark} {regression.kind}: {_inert(regression.message)}")
    lines += ["", "Rules (baseline -> candidate):"]
    width = max((len(change.rule_id) for change in report.rule_changes), default=0)
    for change in report.rule_changes:
        label = change.change.replace("_", " ")
        style = {"new": _RED, "still_failing": _RED, "fixed": _GREEN}.get(change.change, _DIM)
        lines.append(f"  {change.rule_id.ljust(width)}  {change.baseline} -> {change.candidate}  "
                     f"{paint(label, style)}")
    failing = [result for result in report.candidate.results if not result.passed]
    if failing:
        lines += ["", "Candidate violations:"]
        for result in failing:
            lines += _rule(result, report.candidate, paint)
    return lines


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def _inert(text: str) -> str:
    """`text` with control characters and bidirectional controls shown as escapes instead of
    acting on the terminal (or reordering what is shown)."""
    return inert(text)
