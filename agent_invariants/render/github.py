"""GitHub: workflow commands that annotate a pull request, without code scanning.

Each violation of a check, and each regression of a comparison, becomes one line that GitHub
Actions turns into an annotation on the trace file (free for private repositories too, unlike
code scanning); the report's totals follow as plain lines for the log:

    ::error file=runs/candidate.jsonl,line=6,title=refunds-need-approval (require_approval)::Tool payments.refund ...
    ::warning file=runs/candidate.jsonl,title=stop-means-stop (stop_is_final)::...
    FAIL  refund-desk
          trace runs/candidate.jsonl
          14 events · 4 tool calls · 9 errors · 1 warning

Values are escaped as the runner expects (`%`, CR and LF everywhere, and `:` and `,` in the
properties), so a message from a trace cannot end its line or start another command. Files are
named relative to the current folder (the workspace, where GitHub looks for them).
"""
from __future__ import annotations

from pathlib import Path

from msgspec import UNSET, UnsetType

from agent_invariants._paths import inside
from agent_invariants._safe import inert, log_safe
from agent_invariants.mutate.report import MutateReport, false_positive_text, over_block_text, survivor_text
from agent_invariants.render import DEFAULTS, RenderOptions, text
from agent_invariants.render.shared import AnyReport, check_failure, failures, inconclusive, output_place, sections
from agent_invariants.report import CheckBatchReport, CheckReport, CompareReport, Regression, Violation
from agent_invariants.stability import StabilityReport, describe, failed_checks, odd_one

__all__ = ("error", "render")


def render(report: AnyReport | StabilityReport | MutateReport, options: RenderOptions = DEFAULTS) -> str:
    """One workflow command per violation (check) or regression (compare), then the totals."""
    if isinstance(report, StabilityReport):
        return _stability(report, options)
    if isinstance(report, MutateReport):
        return _mutate(report, options)
    lines: list[str] = []
    for section in sections(report):
        if isinstance(section, CompareReport):
            lines += [_command(regression, section.candidate.trace, f"compatibility.{regression.kind}")
                      for regression in section.regressions]
        else:
            lines += _check(section)
    lines += [error("agent-invariants: bad input", failure.error, failure.trace,
                    None if failure.line is UNSET else failure.line) for failure in failures(report)]
    if isinstance(report, CheckBatchReport) and report.stability is not UNSET:   # record --repeat
        lines += _stability_lines(report.stability, options)
    totals = log_safe(text.render(report, RenderOptions(detail="quiet")))   # names in it must not spell commands
    return "\n".join(lines) + ("\n" if lines else "") + totals


def _check(report: CheckReport) -> list[str]:
    lines = [_command(violation, report.trace, f"{violation.rule_id} ({violation.rule_kind})")
             for violation in report.violations]
    if report.truncated is True:
        lines.append(f"::notice title=agent-invariants::{report.violations_total} violations in all; "
                     "raise --max-violations to annotate more")
    if report.record is not UNSET:
        trace = report.record.trace
        for finding in report.record.findings:
            line = "" if finding.seq is UNSET else f",line={finding.seq}"
            lines.append(f"::error file={_file_property(trace)}{line},title={_property(finding.code)}::"
                         f"{_data(finding.message)}")
    return lines


def _command(item: Violation | Regression, trace: str | UnsetType, title: str) -> str:
    """`::error file=…,line=…,title=…::message` (or `::warning`) for one violation or regression."""
    properties = []
    if isinstance(trace, str) and trace != "-":
        properties.append(f"file={_file_property(trace)}")
        if item.line is not UNSET:
            properties.append(f"line={item.line}")
    properties.append(f"title={_property(title)}")
    level = "notice" if inconclusive(item) else item.severity
    return f"::{level} {','.join(properties)}::{_data(item.message)}"


def error(title: str, message: str, file: str | None = None, line: int | None = None) -> str:
    """A workflow command that annotates the run (the GitHub Action's own problems), or with
    `file` (and `line`) that file's line, where the problem is."""
    where = "" if file is None else f"file={_file_property(file)}," + ("" if line is None else f"line={line},")
    return f"::error {where}title={_property(title)}::{_data(message)}"


def _file_property(path: str) -> str:
    """`file=`'s value: the path relative to the current folder when it is inside it, with
    forward slashes. A line break in the name is sent as `%0D`/`%0A`, which the runner turns
    back into the character, so that the annotation lands on the file that has it; other control
    characters, which the runner cannot carry, are shown escaped (as in every format)."""
    name = Path(inside(path) or path).as_posix()
    return inert(_escaped(name)).replace(":", "%3A").replace(",", "%2C")


def _data(value: str) -> str:
    """A command's message, made inert (as every format does: a line break shows as `\\n`) and
    escaped for the runner."""
    return _escaped(inert(value))


def _property(value: str) -> str:
    return _escaped(inert(value)).replace(":", "%3A").replace(",", "%2C")


def _escaped(value: str) -> str:
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _stability(report: StabilityReport, options: RenderOptions) -> str:
    """The annotations of `_stability_lines`, then the text report."""
    lines = _stability_lines(report, options)
    return "\n".join(lines) + ("\n" if lines else "") + log_safe(text.render(report))


def _stability_lines(report: StabilityReport, options: RenderOptions) -> list[str]:
    """One error per unstable path, on the final output's line of the run it shows best in (a
    warning when nothing could be measured)."""
    outputs = options.outputs
    traces = [run.trace for run in report.runs]
    lines = []
    for entry in report.unstable:
        shown = odd_one(entry)
        where = _output_where(traces[shown], shown, outputs)
        lines.append(f"::error {where}title={_property(f'stability: {entry.path} ({entry.kind})')}::"
                     f"{_data(describe(entry, traces))}")
    if not report.measured:
        lines.append("::warning title=stability::Not measured: fewer than two traces report an output.")
    for index in failed_checks(report):   # --contract: a trace that fails it fails the step too
        run = report.runs[index]
        where = _output_where(run.trace, index, outputs)
        lines.append(f"::error {where}title={_property('stability: check')}::{_data(check_failure(run))}")
    return lines


def _output_where(trace: str, index: int, outputs: dict[int, tuple[int, int | None]]) -> str:
    """The `file=…,line=…,` of an annotation at a trace's final output (`output_place`), or ``."""
    file, line = output_place(trace, index, outputs)
    if file is None:
        return ""
    return f"file={_file_property(file)}," + ("" if line is None else f"line={line},")


def _mutate(report: MutateReport, options: RenderOptions) -> str:
    """A warning per survivor on its site's line in the trace and per over-blocked equivalent, an
    error per false positive, then the text report."""
    sites = options.sources.sites if options.sources is not None else {}
    trace = report.trace_file
    lines = []
    for survivor in report.survivors:
        properties = []
        if trace is not None:
            properties.append(f"file={_file_property(trace)}")
            if survivor.id in sites:
                properties.append(f"line={sites[survivor.id][0]}")
        properties.append(f"title={_property(f'mutate: {survivor.id} survived')}")
        lines.append(f"::warning {','.join(properties)}::{_data(survivor_text(survivor))}")
    lines += [f"::warning title={_property(f'mutate: {mutant.id} over-blocked')}::{_data(over_block_text(mutant))}"
              for mutant in report.mutants if mutant.over_block]
    lines += [f"::error title={_property(f'mutate: {found.rewrite} false positive')}::"
              f"{_data(false_positive_text(found))}" for found in report.false_positives]
    return "\n".join(lines) + ("\n" if lines else "") + log_safe(text.render(report))
