"""Text: the report for people at a terminal, grouped by rule, each violation with file:line.

    FAIL  refund-desk
          trace examples/refund/candidate.jsonl
          12 events · 4 tool calls · 2 errors · 0 warnings

    ✗ pay-approval  require_approval  1 error
        candidate.jsonl:7  seq 7  Tool payments.refund was called without a matching prior approval: …
    ✓ no-shell  deny_tool

Colour only when asked (`RenderOptions.color`). Text that comes from traces is made inert:
control characters, terminal escapes included, are shown as `\\x1b`-style escapes, so a trace
cannot move the cursor or recolour the screen.

A validated contract (what `validate` accepted), and a trace summary:

    VALID  refund-desk
          2 rules

      refunds-need-approval  require_approval
      no-shell  deny_tool  (warning)

    14 events · 4 tool calls · 1 failed tool result · 1 approval granted
    tools: kb.search, payments.refund
    outcomes: 1 satisfied, 0 violated; final outcome: satisfied
    completion claims: 1
"""
from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from msgspec import UNSET

from agent_invariants._safe import inert, log_safe_report
from agent_invariants.contract import Contract
from agent_invariants.render import DEFAULTS, RenderOptions
from agent_invariants.render.shared import (
    AnyReport,
    baseline_undecided,
    batch_tally,
    code_of,
    failing_traces,
    inconclusive,
    ok,
    place,
    plural,
    undecided,
    verdict,
    warned,
)
from agent_invariants.report import (
    CheckBatchReport,
    CheckReport,
    CompareBatchReport,
    CompareReport,
    RecordInfo,
    RuleResult,
    TraceSummary,
    Violation,
)

if TYPE_CHECKING:   # a check's report needs none of them: they are imported when one is rendered
    from agent_invariants.lint.report import LintReport
    from agent_invariants.mutate.report import MutateReport
    from agent_invariants.stability import StabilityReport, Unstable

__all__ = ("render",)

_GREEN, _RED, _YELLOW, _DIM, _BOLD, _RESET = "\x1b[32m", "\x1b[31m", "\x1b[33m", "\x1b[2m", "\x1b[1m", "\x1b[0m"

Paint = Callable[[str, str], str]
"""paint(text, style): the text in that style (colour codes), or as it is without colour."""


def render(report: AnyReport | Contract | TraceSummary | StabilityReport | LintReport | MutateReport,
           options: RenderOptions = DEFAULTS) -> str:
    """The report (or validated contract, trace summary, stability, lint or mutate report) as
    readable text (ends with a newline), in colour if `options.color`."""
    paint = _painter(options.color)
    if isinstance(report, CheckReport):
        lines = _check(report, paint, options.detail == "quiet")
    elif isinstance(report, CompareReport):
        lines = _compare(report, paint, options.detail == "quiet")
    elif isinstance(report, CheckBatchReport | CompareBatchReport):
        lines = _batch(report, paint, options.detail)
    elif isinstance(report, Contract):
        lines = _contract(report)
    elif isinstance(report, TraceSummary):
        lines = _summary(report)
    else:
        lines = _quality(report, paint)
    return log_safe_report("\n".join(lines) + "\n", "text")


def _quality(report: StabilityReport | LintReport | MutateReport, paint: Paint) -> list[str]:
    """The reports of the commands that judge a contract or runs (imported only for them)."""
    from agent_invariants.lint.report import LintReport
    from agent_invariants.mutate.report import MutateReport

    if isinstance(report, MutateReport):
        return _mutate(report, paint)
    if isinstance(report, LintReport):
        return _lint(report, paint)
    return _stability(report, paint)


def _batch(report: CheckBatchReport | CompareBatchReport, paint: Paint, detail: str) -> list[str]:
    """Each trace's section (only the failing ones, and in them only the failing rules, unless
    `detail` is verbose), the unreadable traces, then one line for them all; when quiet, that
    line alone (the unreadable traces are on stderr too)."""
    lines: list[str] = []
    for section in report.reports if detail != "quiet" else ():
        if detail == "verbose":
            lines += _section(section, paint, all_rules=True) + [""]
        elif not ok(section) or _has_findings(section):
            lines += _section(section, paint, all_rules=False) + [""]
    for failure in report.failures if detail != "quiet" else ():
        lines += [f"{paint('ERROR', _RED + _BOLD)}  {inert(failure.trace)}", f"      {inert(failure.error)}", ""]
    headline = paint(*_WORDS[verdict(report)]) if isinstance(report, CheckBatchReport) else \
        _verdict(paint, ok(report), "COMPATIBLE", "REGRESSION")
    lines.append(f"{headline}  {inert(report.contract.name)}  {' · '.join(batch_tally(report))}")
    if isinstance(report, CheckBatchReport) and report.stability is not UNSET:   # record --repeat
        stability = _stability(report.stability, paint)
        lines += [""] + (stability[:1] if detail == "quiet" else stability)
    return lines


_WORDS = {"passed": ("PASS", _GREEN + _BOLD), "failed": ("FAIL", _RED + _BOLD),
          "unstable": ("UNSTABLE", _RED + _BOLD), "incomplete": ("INCOMPLETE", _YELLOW)}
"""A check's (or a batch of checks') verdict as the text report heads it (`shared.verdict`), and
its colour."""


def _has_findings(section: CheckReport | CompareReport) -> bool:
    """A recorded run (`record --repeat`) with findings is shown even when its rules passed."""
    return isinstance(section, CheckReport) and section.record is not UNSET and bool(section.record.findings)


def _section(section: CheckReport | CompareReport, paint: Paint, all_rules: bool) -> list[str]:
    if isinstance(section, CompareReport):
        return _compare(section, paint, False, all_rules=all_rules)
    return _check(section, paint, False, all_rules=all_rules)


def _verdict(paint: Paint, good: bool, yes: str, no: str) -> str:
    return paint(yes, _GREEN + _BOLD) if good else paint(no, _RED + _BOLD)


def _painter(color: bool) -> Paint:
    if not color:
        return lambda text, style: text
    return lambda text, style: f"{style}{text}{_RESET}"


def _check(report: CheckReport, paint: Paint, quiet: bool, all_rules: bool = True) -> list[str]:
    lines = [f"{paint(*_WORDS[verdict(report)])}  {inert(report.contract.name)}"]
    if report.trace is not UNSET:
        run = "" if report.run is UNSET else f" (run {inert(report.run)})"
        lines.append(f"      trace {inert(report.trace)}{run}")
    lines.append("      " + _counts(report))
    if report.record is not UNSET:
        lines += _record(report.record, paint)
    if quiet:
        return lines
    lines.append("")
    for result in report.results:
        if all_rules or not result.passed:
            lines += _rule(result, report, paint)
    return lines


def _record(run: RecordInfo, paint: Paint) -> list[str]:
    """How the recorded run went (`record`): its ending, denials, stderr, and each finding."""
    facts = [f"run {inert(run.run_id)}", f"ended by {inert(run.ended_by)}"]
    if run.denied:
        facts.append(f"{plural(run.denied, 'call')} denied")
    if run.stderr_log is not None:
        facts.append(f"stderr {plural(run.stderr_bytes, 'byte')} in {inert(run.stderr_log)}")
    lines = ["      " + " · ".join(facts)]
    for finding in run.findings:
        where = f"{inert(run.trace)}:{finding.seq}  seq {finding.seq}  " if finding.seq is not UNSET else ""
        lines.append(f"    {paint('✗', _RED)} {paint(where, _DIM)}{paint('[' + finding.code + ']', _DIM)} "
                     f"{inert(finding.message)}")
    return lines


def _counts(report: CheckReport) -> str:
    summary = report.summary
    return " · ".join([
        plural(summary.events, "event"), plural(summary.tool_calls, "tool call"),
        plural(report.error_count, "error"), plural(report.warning_count, "warning"),
    ])


def _rule(result: RuleResult, report: CheckReport, paint: Paint) -> list[str]:
    inconclusive = 0 if result.inconclusive is UNSET else result.inconclusive
    counted = result.counted
    if result.passed:
        mark = paint("?", _YELLOW) if inconclusive else paint("✓", _GREEN)
        tally = ""
    elif result.severity == "error":
        mark = paint("✗", _RED)
        tally = "  " + plural(counted, "error")
    else:
        mark = paint("!", _YELLOW)
        tally = "  " + plural(counted, "warning")
    if inconclusive:
        tally += f"  {inconclusive} inconclusive (--partial)"
    lines = [f"{mark} {result.rule_id}  {paint(result.rule_kind, _DIM)}{tally}"]
    for violation in result.violations:
        code = code_of(violation)
        shown = f"{paint('[' + inert(code) + ']', _DIM)} " if code else ""
        lines.append(f"    {paint(_where(violation, report), _DIM)}{shown}{inert(violation.message)}")
    left_out = result.violation_count - len(result.violations)
    if left_out:
        lines.append(f"    … and {left_out} more (raise --max-violations to see them)")
    return lines


def _where(violation: Violation, report: CheckReport) -> str:
    parts = place(violation, inert(report.trace) if report.trace is not UNSET else "<trace>")
    if violation.event_seq is UNSET and violation.event_index is UNSET:
        parts.append("whole trace")
    return "  ".join(parts) + "  "


def _compare(report: CompareReport, paint: Paint, quiet: bool, all_rules: bool = True) -> list[str]:
    verdict = _verdict(paint, report.compatible, "COMPATIBLE", "REGRESSION")
    lines = [f"{verdict}  {inert(report.contract.name)}"]
    for label, side in (("baseline ", report.baseline), ("candidate", report.candidate)):
        name = f"  {inert(side.trace)}" if side.trace is not UNSET else ""
        run = "" if side.run is UNSET else f" (run {inert(side.run)})"
        lines.append(f"      {label}{name}{run}  {_counts(side)}")
    if quiet:
        return lines
    lines.append("")
    if not report.regressions:
        lines.append(paint("✓", _GREEN) + " No configured behaviour regression detected.")
    for regression in report.regressions:
        mark = paint("?", _YELLOW) if inconclusive(regression) else paint("✗", _RED)
        lines.append(f"{mark} {regression.kind}: {inert(regression.message)}")
    changes = [change for change in report.rule_changes
               if all_rules or change.change != "passing" or change.candidate_inconclusive
               or change.baseline_inconclusive]
    if changes:   # (in a batch, a rule that passes on both sides is not shown)
        lines += ["", "Rules (baseline -> candidate):"]
    width = max((len(change.rule_id) for change in changes), default=0)
    for change in changes:
        candidate: str = change.candidate
        label = change.change.replace("_", " ")
        style = {"new": _RED, "still_failing": _RED, "fixed": _GREEN}.get(change.change, _DIM)
        if warned(change):   # (a warning fails nothing: no regression, in yellow)
            label, style = f"{label} (warning)", _YELLOW
        if undecided(change):   # (--partial: what only the end of the run decides)
            candidate, label, style = "inconclusive", f"{change.candidate_inconclusive} inconclusive", _YELLOW
        baseline = "inconclusive" if baseline_undecided(change) else change.baseline
        lines.append(f"  {change.rule_id.ljust(width)}  {baseline} -> {candidate}  {paint(label, style)}")
    failing = [result for result in report.candidate.results if not result.passed or result.inconclusive]
    if failing:
        lines += ["", "Candidate violations:"]
        for result in failing:
            lines += _rule(result, report.candidate, paint)
    return lines


def _contract(contract: Contract) -> list[str]:
    lines = [f"VALID  {contract.name}", f"      {plural(len(contract.rules), 'rule')}", ""]
    return lines + [f"  {rule.id}  {rule.kind}{'  (warning)' if rule.effective_severity == 'warning' else ''}"
                    for rule in contract.rules]


def _summary(summary: TraceSummary) -> list[str]:
    return [
        " · ".join([plural(summary.events, "event"), plural(summary.tool_calls, "tool call"),
                    plural(summary.tool_failures, "failed tool result"),
                    plural(summary.approvals_granted, "approval granted", "approvals granted")]),
        f"tools: {', '.join(summary.tools) if summary.tools else 'none'}",
        (f"outcomes: {summary.outcomes_satisfied} satisfied, {summary.outcomes_violated} violated; "
         f"final outcome: {summary.final_outcome or 'none'}"),
        f"completion claims: {summary.completion_claims}",
    ]



def _stability(report: StabilityReport, paint: Paint) -> list[str]:
    """The verdict, each unstable path with the traces on each side (by their number), then the
    numbered traces: which do not report, and with a contract, each one's check."""
    from agent_invariants.stability import failed_checks, reporting_said, unstable_paths

    said = reporting_said(report)
    if not report.measured:
        head = f"{paint('NOT MEASURED', _YELLOW + _BOLD)}  {said}; 2 are needed"
    elif report.stable:
        head = f"{paint('STABLE', _GREEN + _BOLD)}  {said}, all of one shape"
    else:
        paths = plural(unstable_paths(report), "unstable path")
        head = f"{paint('UNSTABLE', _RED + _BOLD)}  {said} · {paths}"
    failing = failed_checks(report)
    if failing:   # (--contract: the exit is 1 for these too)
        head += f" · {paint(failing_traces(len(failing), len(report.runs)), _RED + _BOLD)}"
    lines = [head]
    for entry in report.unstable:
        lines.append(f"  {paint('✗', _RED)} {inert(entry.path)}  {entry.kind}  {_sides(entry)}")
    lines.append("")
    for number, run in enumerate(report.runs):
        notes = [] if run.reporting else [paint("no output", _DIM)]
        if run.check:
            notes.append(f"check {_verdict(paint, run.check.passed, 'PASS', 'FAIL')} "
                         f"{plural(run.check.error_count, 'error')} · {plural(run.check.warning_count, 'warning')}")
        lines.append(f"  [{number}] {inert(run.trace)}" + "".join(f"  {note}" for note in notes))
    return lines


_EXCLUDED_LISTED = 20
"""The ids of equivalent and of invalid mutants the text names (the JSON report has every one)."""


def _mutate(report: MutateReport, paint: Paint) -> list[str]:
    """The score and the counts, the control, each operator's kills, then every survivor with its
    hint, every over-blocked equivalent, the equivalent and the invalid mutants, and every false
    positive."""
    counts = (f"{report.killed} killed · {report.survived} survived · {report.equivalent} equivalent · "
              f"{report.invalid} invalid")
    if report.score is None:
        lines = [f"{paint('NO SCORE', _YELLOW + _BOLD)}  no mutant could be scored: {counts}"]
    else:
        lines = [f"{paint('SCORE', _BOLD)} {report.score:.2f}  {counts}"]
    control = report.control
    shown = "none" if control.score is None else f"{control.score:.2f}"
    lines.append(f"control {shown} ({'auto-written' if control.auto else 'given'}): {control.killed} killed · "
                 f"{control.survived} survived")
    if control.too_easy:
        lines.append(f"  {paint('!', _YELLOW)} mutants too easy: the control scores at least half the contract's "
                     "score, so this trace tells a good contract from a trivial one poorly")
    from agent_invariants.mutate.operators import OPERATORS

    by_operator: dict[str, list[int]] = {}
    for mutant in report.mutants:
        if mutant.status in ("killed", "survived"):
            tally = by_operator.setdefault(mutant.operator, [0, 0])
            tally[0 if mutant.status == "killed" else 1] += 1
    if by_operator:
        lines.append("killed by operator: " + " · ".join(
            f"{operator} {by_operator[operator][0]}/{sum(by_operator[operator])}"
            for operator in OPERATORS if operator in by_operator))
    hints = {survivor.id: survivor.hint for survivor in report.survivors}
    for mutant in report.mutants:
        if mutant.status == "survived":
            warned = " (warned)" if mutant.warned else ""
            lines.append(f"  {paint('✗', _RED)} survived {inert(mutant.id)}{warned}  would be killed by: "
                         f"{hints.get(mutant.id, '')}")
        elif mutant.over_block:
            lines.append(f"  {paint('!', _YELLOW)} over-block {inert(mutant.id)}  behaves as the original, yet "
                         f"{', '.join(inert(rule) for rule in mutant.killed_by)} rejects it")
    for status in ("equivalent", "invalid"):   # excluded from the score, and listed (§6)
        excluded = [mutant.id for mutant in report.mutants if mutant.status == status]
        if excluded:
            more = f", … and {len(excluded) - _EXCLUDED_LISTED} more" if len(excluded) > _EXCLUDED_LISTED else ""
            listed = ", ".join(inert(mutant_id) for mutant_id in excluded[:_EXCLUDED_LISTED])
            lines.append(f"{status} (not scored): {listed}{more}")
    if report.false_positives:
        for found in report.false_positives:
            where = "" if found.file is UNSET else f" {inert(found.file)}"
            lines.append(f"  {paint('✗', _RED)} false positive: the {found.rewrite} rewrite{where} fails "
                         f"{', '.join(inert(rule) for rule in found.killed_by)}")
    else:
        lines.append("false positives: none")
    return lines


def _sides(entry: Unstable) -> str:
    """Which traces hold the path and which do not (presence), or which types each holds (type)."""
    def listed(indexes: list[int]) -> str:
        return ", ".join(f"[{index}]" for index in indexes)

    if entry.kind == "presence":
        parts = [f"present in {listed(entry.present_in)}", f"absent in {listed(entry.absent_in)}"]
        if entry.unknown_in:
            parts.append(f"unknown in {listed(entry.unknown_in)} (under an empty array or map)")
        return " · ".join(parts)
    by_types: dict[str, list[int]] = {}
    for index in entry.present_in:
        by_types.setdefault("|".join(entry.types[index]), []).append(index)
    return " · ".join(f"{types} in {listed(indexes)}" for types, indexes in by_types.items())


def _lint(report: LintReport, paint: Paint) -> list[str]:
    """`<level> <code> [<rule ids>] <pointer>: <message>` per finding, then the counts."""
    lines = []
    for finding in report.findings:
        level = paint(finding.level, _RED if finding.level == "error" else _YELLOW)
        lines.append(f"{level} {finding.code} [{', '.join(inert(rule) for rule in finding.rule_ids)}] "
                     f"{inert(finding.pointer)}: {inert(finding.message)}")
    lines.append(f"{inert(report.contract.name)}: {plural(report.errors, 'error')} · "
                 f"{plural(report.warnings, 'warning')}")
    if report.truncated is True:
        lines.append(f"lint stopped after {len(report.findings)} findings: the contract has more")
    if report.interface is not UNSET:
        lines += ["", "output paths read:" if report.interface else "output paths read: none"]
        lines += [f"  {inert(read.path)}  {'required' if read.required else paint('not required', _YELLOW)}  "
                  f"[{', '.join(inert(rule) for rule in read.rules)}]" for read in report.interface]
    return lines
