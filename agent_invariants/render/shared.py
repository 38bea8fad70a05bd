"""What every format asks of a report, answered once: its sections, its unreadable traces, its
verdict, counted nouns, and where a violation happened.

A report is one of four: a check or a compare report, or a batch of either. A format walks the
`sections` of any of them (a single report is its own one section) and lists its `failures`
(a single report has none), so only a format that shows a batch differently asks `is_batch`.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, TypeGuard

from msgspec import UNSET

from agent_invariants._safe import inert
from agent_invariants.report import (
    BatchFailure,
    CheckBatchReport,
    CheckReport,
    CompareBatchReport,
    CompareReport,
    Regression,
    RuleChange,
    RuleResult,
    Violation,
)

if TYPE_CHECKING:
    from agent_invariants.stability import StabilityRun

__all__ = ("AnyReport", "batch_tally", "check_failure", "checks", "code_of", "failing_traces", "failures",
           "inconclusive", "inconclusive_rule", "is_batch", "ok", "output_place", "passing",
           "place", "plural", "sections", "undecided", "utf8_within", "verdict", "warning_count",
           "baseline_undecided", "warned")

AnyReport = CheckReport | CompareReport | CheckBatchReport | CompareBatchReport


def is_batch(report: AnyReport) -> TypeGuard[CheckBatchReport | CompareBatchReport]:
    """True for the report of several traces (or pairs)."""
    return isinstance(report, (CheckBatchReport, CompareBatchReport))


def sections(report: AnyReport) -> Sequence[CheckReport | CompareReport]:
    """The reports of each trace (or pair) of a batch, in order; a single report is its own one."""
    return [report] if isinstance(report, (CheckReport, CompareReport)) else report.reports


def failures(report: AnyReport) -> list[BatchFailure]:
    """The traces of a batch that could not be read; none for a single report."""
    return [] if isinstance(report, (CheckReport, CompareReport)) else report.failures


def checks(report: AnyReport) -> list[CheckReport]:
    """Every check report inside `report`: each compare report holds a baseline's and a candidate's."""
    found: list[CheckReport] = []
    for section in sections(report):
        found += [section.baseline, section.candidate] if isinstance(section, CompareReport) else [section]
    return found


def ok(report: AnyReport) -> bool:
    """The verdict: a check (or batch of checks) passed, a comparison (or batch) is compatible."""
    return report.passed if isinstance(report, (CheckReport, CheckBatchReport)) else report.compatible


def passing(section: CheckReport | CompareReport) -> bool:
    """Whether a batch's section reads as passing (`passed`, `compatible`): what a format that
    cannot list every section lists after the others, or counts only."""
    return verdict(section) in ("passed", "compatible")


def verdict(report: AnyReport) -> str:
    """The word every format heads a report (or a batch's section) with, which says what the exit
    code says. A comparison is `compatible` or a `regression`; a check `passed` or `failed`, and:

    - a run of `record` whose rules passed is `failed` when `--enforce` denied a call (point 84:
      its exit), else `incomplete` when the run did not test its scenario (a finding: the agent
      crashed or was stopped, a fixture or an approval missed);
    - `record --repeat` is `unstable` when the runs passed but their final outputs changed shape,
      and `incomplete` when some run was, or when fewer than two runs reported an output."""
    if isinstance(report, (CompareReport, CompareBatchReport)):
        return "compatible" if report.compatible else "regression"
    if not report.passed:
        return "failed"
    if isinstance(report, CheckReport):
        if report.record is UNSET:
            return "passed"
        return "failed" if report.record.denied else "incomplete" if report.record.findings else "passed"
    if any(verdict(part) == "failed" for part in report.reports):
        return "failed"
    stability = report.stability
    if stability is not UNSET and stability.measured and not stability.stable:
        return "unstable"
    if (stability is not UNSET and not stability.measured) or any(verdict(part) == "incomplete"
                                                                for part in report.reports):
        return "incomplete"
    return "passed"


def warning_count(report: AnyReport) -> int:
    """Warning violations of the checked traces: of each candidate, for a comparison (a
    baseline's warnings are the known state, not something the change did)."""
    return sum((section.candidate if isinstance(section, CompareReport) else section).warning_count
               for section in sections(report))


def batch_tally(report: CheckBatchReport | CompareBatchReport, grouped: bool = False) -> list[str]:
    """A batch's headline counts, in parts each format joins its own way: how many traces passed,
    failed, were incomplete (`record --repeat`) or unreadable, then the errors and warnings; of a
    batch of comparisons, the pairs compatible, regressed or unreadable, then the regressions.
    `grouped` writes numbers with thousands separators."""
    def number(count: int) -> str:
        return f"{count:,}" if grouped else str(count)

    def counted(count: int, noun: str) -> str:
        return f"{number(count)} {noun if count == 1 else noun + 's'}"

    words = [verdict(section) for section in report.reports]
    good = sum(1 for word in words if word in ("passed", "compatible"))
    incomplete = words.count("incomplete")
    bad = len(report.reports) - good - incomplete
    if isinstance(report, CheckBatchReport):
        unreadable = f", {number(len(report.failures))} unreadable" if report.failures else ""
        return [f"{counted(report.traces, 'trace')}: {number(good)} passed, {number(bad)} failed"
                f"{f', {number(incomplete)} incomplete' if incomplete else ''}{unreadable}",
                counted(report.error_count, "error"), counted(report.warning_count, "warning")]
    unread = report.pairs - len(report.reports)   # both traces of a pair may be among the failures
    return [f"{counted(report.pairs, 'pair')}: {number(good)} compatible, {number(bad)} regressed"
            f"{f', {number(unread)} unreadable' if unread else ''}",
            counted(report.regressions, "regression")]


def plural(count: int, noun: str, plural_noun: str | None = None) -> str:
    """`1 error`, `2 errors`; `plural_noun` where adding an s is wrong (`approvals granted`)."""
    return f"{count} {noun if count == 1 else plural_noun or noun + 's'}"


def place(item: Violation | Regression, trace: str | None, wrap: Callable[[str], str] = str) -> list[str]:
    """Where `item` happened, in parts each format joins its own way: `trace:line` (through `wrap`)
    when both are known, `span S` for an imported trace's event, then `seq N` when the event is.
    No parts: the whole trace."""
    parts: list[str] = []
    if item.line is not UNSET and trace is not None:
        parts.append(wrap(f"{trace}:{item.line}"))
    span = getattr(item, "span_id", UNSET)
    if span is not UNSET:
        parts.append(f"span {inert(span, 64)}")
    if item.event_seq is not UNSET:
        parts.append(f"seq {item.event_seq}")
    return parts


def code_of(violation: Violation) -> str:
    """A violation's code, and where in its event when the rule says (`tool_args.mismatch at
    /args/amount`), and whether it is `inconclusive` or was `prevented` (`record --enforce` denied
    the call), as every format but JSON shows it (JSON has these fields)."""
    code = "" if violation.code is UNSET else violation.code
    if violation.pointer is not UNSET:
        code = f"{code} at {violation.pointer}"
    if violation.status == "inconclusive":
        code += ", inconclusive"
    if violation.prevented is True:
        code += ", prevented"
    return code


def inconclusive(item: Violation | Regression) -> bool:
    """Whether a violation or a regression is `inconclusive` (`--partial`): reported, but not
    failing anything; SARIF gives it the level `note`, annotations `notice`."""
    return item.status == "inconclusive"


def inconclusive_rule(result: RuleResult) -> bool:
    """Whether a rule's violations are all `inconclusive` (`--partial`): it passed, but it is not
    shown as passed, as the rest of the run may yet break it."""
    return bool(result.inconclusive) and result.violation_count == result.inconclusive


def undecided(change: RuleChange) -> bool:
    """Whether a compared rule passed in the candidate only because its violations there are
    `inconclusive` (`--partial`): shown as inconclusive, not as passing or fixed."""
    return change.candidate == "passed" and bool(change.candidate_inconclusive)


def warned(change: RuleChange) -> bool:
    """Whether a compared rule fails in the candidate as a warning (newly or still): it fails
    nothing, so no format shows it as a regression."""
    return change.severity == "warning" and change.change in ("new", "still_failing")


def baseline_undecided(change: RuleChange) -> bool:
    """The same of the baseline: a rule it passed only because its violations there are
    inconclusive is shown so, else the same cut trace on both sides would read as a change."""
    return change.baseline == "passed" and bool(change.baseline_inconclusive)


def failing_traces(failing: int, traces: int) -> str:
    """How many of the traces `stability --contract` checked fail the contract: `1 of 2 traces fails the contract`."""
    return f"{failing} of {plural(traces, 'trace')} {'fails' if failing == 1 else 'fail'} the contract"


def check_failure(run: StabilityRun) -> str:
    """One sentence on a trace `stability --contract` found failing the contract (its counts; a
    `check` of the trace lists the violations)."""
    check = run.check
    assert check is not UNSET, "a run --contract checked"
    return (f"{run.trace} fails the contract: {plural(check.error_count, 'error')}, "
            f"{plural(check.warning_count, 'warning')} (check it for the violations).")


def output_place(trace: str, index: int, outputs: dict[int, tuple[int, int | None]]) -> tuple[str | None, int | None]:
    """Where a stability finding about the trace at `index` is placed: its file, at the line of
    its final output (`RenderOptions.outputs`, as SARIF places it). Standard input (`-`) is no
    file: (None, None)."""
    if trace == "-":
        return None, None
    found = outputs.get(index)
    return trace, None if found is None else found[0]


def utf8_within(text: str, limit: int) -> bool:
    """Whether `text` takes at most `limit` bytes as UTF-8 (a file's limit is in bytes), encoded
    only when its characters alone do not settle it (at most four bytes each)."""
    return len(text) <= limit // 4 or len(text.encode("utf-8")) <= limit
